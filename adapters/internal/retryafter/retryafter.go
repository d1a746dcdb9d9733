// Package retryafter reads an HTTP Retry-After header (RFC 9110, section
// 10.2.3), for the adapters whose platforms and receivers ask them to
// wait.
package retryafter

import (
	"net/http"
	"strconv"
	"time"
)

// Max bounds what Parse returns: a server asking for longer is waited
// on for an hour, and asked again; and a number of seconds large enough
// to overflow a duration never becomes a wait that has already passed.
const Max = time.Hour

// Parse returns how long h's Retry-After asks to wait from now, at most
// Max: a number of seconds, or an HTTP date. Zero when there is none, it
// cannot be read, or it has passed.
func Parse(h http.Header, now time.Time) time.Duration {
	s := h.Get("Retry-After")
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		return time.Duration(min(n, int64(Max/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(s); err == nil && t.After(now) {
		return min(t.Sub(now), Max)
	}
	return 0
}
