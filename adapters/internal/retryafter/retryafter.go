// Package retryafter reads an HTTP Retry-After header (RFC 9110, section
// 10.2.3), for the adapters whose platforms and receivers ask them to
// wait.
package retryafter

import (
	"net/http"
	"strconv"
	"time"
)

// Parse returns how long h's Retry-After asks to wait from now: a number
// of seconds, or an HTTP date. Zero when there is none, it cannot be
// read, or it has passed.
func Parse(h http.Header, now time.Time) time.Duration {
	s := h.Get("Retry-After")
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(s); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
