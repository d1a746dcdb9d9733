package app

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
)

// The timeouts of askbridge's HTTP servers, beside ReadHeaderTimeout's
// 10 s. Variables only so that a test can shorten them.
var (
	// idleTimeout closes a keep-alive connection no request has used for
	// that long. Without it a client (no token needed: GET /healthz) held
	// a server goroutine and its buffers per connection for as long as it
	// liked, up to the process's file limit. Long polls are taken over
	// (hijacked) and MCP and event streams are requests in progress, so
	// none is idle.
	idleTimeout = 2 * time.Minute
	// bodyTimeout is how long a request has to send its body (bodyDeadline).
	bodyTimeout = time.Minute
)

// newServer is an HTTP server for h with those timeouts and no
// WriteTimeout: long polls and MCP tool calls stay open until a human
// answers, bounded by their own timeouts instead.
func newServer(h http.Handler) *http.Server {
	return &http.Server{Handler: bodyDeadline(h), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes}
}

// bodyDeadline gives a request sent with a body bodyTimeout to send it
// (a client that sent its headers and stalled held its connection for
// good), and lifts the deadline once the body has been read: the hook
// door and MCP read theirs and then wait minutes for a person, and a
// deadline passing then would end the request (net/http reads the
// connection after the body, to see the client leave).
func bodyDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if httpapi.HasBody(r) {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(bodyTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// deadlineBody lifts its connection's read deadline once it is read to
// its end. A body that failed keeps it: net/http then reads what is left
// of it after the handler, and that must fail as fast.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
