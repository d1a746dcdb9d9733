package mcp

import (
	"io"
	"net/http"
	"strings"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A blocking call over streamable HTTP answers on an SSE stream that the
// SDK opens only when it has a message to write. A client that gave no
// progress token gets none while a person takes their time, so until the
// question closes nothing at all crosses the connection, not even the
// response's headers, and a proxy in between (nginx and AWS ALBs cut an
// idle one after 60 s) drops the call. So each wait slice without a
// progress notification writes an SSE comment on the call's stream
// instead: a line starting with ":", which the SSE format has every
// reader skip, so it is no MCP message and no client sees it, yet it is
// bytes on the wire. (The SDK writes the same on the streams it opens
// without a message, for the same reason.) Stdio has no proxy, and sends
// nothing.

// keepAliveComment is the comment written: the event's blank line ends it.
const keepAliveComment = ": askbridge is waiting for a person to answer\n\n"

// writeKeepAlive writes keepAliveComment on w, and flushes it.
func writeKeepAlive(w http.ResponseWriter) error {
	if _, err := io.WriteString(w, keepAliveComment); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}

// track names r's POST in callHeader (replacing whatever a client sent
// under that name) and registers its context and its response, so the
// call it carries can end with it and keep its stream alive. end
// unregisters it; after end, nothing more is written for it.
func (g *cancelGate) track(w http.ResponseWriter, r *http.Request) (aw *aliveWriter, end func()) {
	id := randomHex(12)
	r.Header.Set(callHeader, id)
	aw = &aliveWriter{ResponseWriter: w}
	g.mu.Lock()
	g.posts[id] = &post{ctx: r.Context(), w: aw}
	g.mu.Unlock()
	return aw, func() {
		g.mu.Lock()
		delete(g.posts, id)
		if len(g.posts) == 0 {
			for _, ch := range g.idle {
				close(ch)
			}
			g.idle = nil
		}
		g.mu.Unlock()
		aw.end()
	}
}

// whenIdle returns a channel closed once no POST the gate tracks (a
// session's call, any 2026-07-28 request) is in flight: each has written
// its response, or ended.
func (g *cancelGate) whenIdle() <-chan struct{} {
	ch := make(chan struct{})
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.posts) == 0 {
		close(ch)
		return ch
	}
	g.idle = append(g.idle, ch)
	return ch
}

// tracking registers every POST to next (the stateless handler: each
// POST is the whole of its call), as wrap does for the calls of sessions.
func (g *cancelGate) tracking(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(callHeader) // the gate's to set, never the client's
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		aw, end := g.track(w, r)
		defer end()
		next.ServeHTTP(aw, r)
	})
}

// keepAlive writes a comment on the stream of the POST that carried
// req, if it is an SSE stream still being served; it reports whether it
// wrote.
func (h *handler) keepAlive(req *mcpsdk.CallToolRequest) bool {
	if req == nil || req.Extra == nil {
		return false
	}
	p := h.opts.gate.post(req.Extra.Header)
	return p != nil && p.w.comment()
}

// aliveWriter is a POST's response, shared by the SDK, which writes the
// call's messages, and keepAlive, which writes comments from the call's
// own goroutine. A mutex keeps their writes whole (the SDK writes each
// event in one Write) and their flushes apart.
type aliveWriter struct {
	http.ResponseWriter
	mu    sync.Mutex
	ended bool // the handler returned: the response is no longer ours
}

func (w *aliveWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *aliveWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

// FlushError is what http.ResponseController calls to flush.
func (w *aliveWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (w *aliveWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// comment writes keepAliveComment and flushes it, unless the response is
// not an event stream (the SDK chose its headers before the call reached
// the tool, and a JSON body must stay whole) or its handler has returned.
func (w *aliveWriter) comment() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		return false
	}
	return writeKeepAlive(w.ResponseWriter) == nil
}

func (w *aliveWriter) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended = true
}
