package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"

	"github.com/askbridge/askbridge/adapters/internal/peek"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// cancelledMethod is the notification a client sends to withdraw a request.
const cancelledMethod = "notifications/cancelled"

// withholding wraps a transport so that a request the client cancelled
// gets no response: MCP 2025-11-25 says the receiver of
// notifications/cancelled should not answer the request, and the SDK
// answers every request its handler returns from, cancelled or not. The
// question a cancelled call parked stays parked; get_answer collects it.
type withholding struct {
	mcpsdk.Transport
	log *slog.Logger
}

func (t withholding) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &withholdingConn{Connection: c, log: t.log, inflight: map[jsonrpc.ID]bool{}}, nil
}

// withholdingConn tracks the client's requests in flight, marks those the
// client cancels, and drops their responses on the way out. Only requests
// still in flight are marked, so an id the client reuses later is answered.
type withholdingConn struct {
	mcpsdk.Connection
	log *slog.Logger

	mu       sync.Mutex
	inflight map[jsonrpc.ID]bool // true once cancelled
}

func (c *withholdingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && err == nil {
		c.mu.Lock()
		switch {
		case r.IsCall():
			c.inflight[r.ID] = false
		case r.Method == cancelledMethod:
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(r.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					if _, ok := c.inflight[id]; ok {
						c.inflight[id] = true
					}
				}
			}
		}
		c.mu.Unlock()
	}
	return m, err
}

func (c *withholdingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Response); ok {
		c.mu.Lock()
		cancelled := c.inflight[r.ID]
		delete(c.inflight, r.ID)
		c.mu.Unlock()
		if cancelled {
			c.log.Debug("askbridge mcp: no response to a cancelled request", "request", r.ID.Raw())
			return nil
		}
	}
	return c.Connection.Write(ctx, m)
}

// maxPeek is how much of a POST body cancelGate reads to tell calls and
// cancellations apart, and the most a POST to /mcp may carry (the SDK is
// told so, and refuses a larger one with 413, as the API refuses a body
// over a MiB): no call passes the door unread.
const maxPeek = 1 << 20

// cancelGate does for streamable HTTP what withholding does for stdio. A
// call's response travels on the event stream of the POST that carried
// the call; once the client cancels that call (a notifications/cancelled
// POST in the same session, by the same caller), nothing more is written
// to that stream.
//
// It also ties each call to its POST. When that request ends before the
// call does (the client was killed, or the connection dropped), no
// response can reach the client any more, yet the SDK lets the call run
// on (for protocol revisions before 2026-07-28), and a call that waits for
// a person could wait for hours and hold its session open all that time.
// So the gate names the POST in a header of its own (callHeader), and the
// tool handler ends its call with the POST (postContext).
type cancelGate struct {
	mu    sync.Mutex
	calls map[gateKey]chan struct{} // closed once the call is cancelled
	posts map[string]*post          // by callHeader: the POST carrying the call
	idle  []chan struct{}           // closed once posts is empty (whenIdle)
}

// post is a POST that carries a call: its request's context, and its
// response, for keeping the stream alive (keepalive.go).
type post struct {
	ctx context.Context
	w   *aliveWriter
}

// callHeader names, on a POST carrying a call, the gate's record of it.
// The gate sets it; whatever a client sent under that name is replaced.
const callHeader = "X-Askbridge-Call"

// postContext is the context of the POST that carried the call whose
// request had header h, or nil if there is none (not over HTTP, or the
// POST has ended).
func (g *cancelGate) postContext(h http.Header) context.Context {
	if p := g.post(h); p != nil {
		return p.ctx
	}
	return nil
}

// post is the POST that carried the call whose request had header h, or
// nil.
func (g *cancelGate) post(h http.Header) *post {
	if g == nil || h == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.posts[h.Get(callHeader)]
}

// gateKey names a call in flight: its session, its caller (the token's
// user the bearer middleware named, "" without one) and its request id.
// The gate acts before the SDK checks that a request's caller owns the
// session it names, so the caller is part of the key: a cancel, or a
// call, sent by another caller under a session id it learnt reaches
// nothing of the session's own calls, and the SDK then refuses it.
type gateKey struct {
	session string
	caller  string
	id      jsonrpc.ID
}

// callerOf is the user the bearer middleware named for r, or "".
func callerOf(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

func newCancelGate() *cancelGate {
	return &cancelGate{calls: map[gateKey]chan struct{}{}, posts: map[string]*post{}}
}

// sessionHeader is the streamable transport's session id header.
const sessionHeader = "Mcp-Session-Id"

func (g *cancelGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(callHeader) // the gate's to set, never the client's
		session := r.Header.Get(sessionHeader)
		if r.Method != http.MethodPost || session == "" || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := peek.Body(&r.Body, maxPeek)
		var req *jsonrpc.Request
		batched := false // a batch carrying a call
		if err == nil && len(body) < maxPeek {
			if m, derr := jsonrpc.DecodeMessage(body); derr == nil {
				req, _ = m.(*jsonrpc.Request)
			} else {
				batched = batchCarriesCall(body)
			}
		}
		switch {
		case batched:
			// Up to 2025-03-26 a POST may carry a batch, whose calls all
			// answer on its one stream: the POST is tracked as a single
			// call's is (the calls end with it, keep it alive, and a stop
			// waits for their results), but no cancel is gated, since
			// one call's cancel must not silence the others' results.
			aw, end := g.track(w, r)
			defer end()
			w = aw
		case req == nil:
		case req.IsCall():
			key := gateKey{session, callerOf(r), req.ID}
			cancelled := make(chan struct{})
			g.mu.Lock()
			g.calls[key] = cancelled
			g.mu.Unlock()
			defer func() {
				g.mu.Lock()
				if g.calls[key] == cancelled {
					delete(g.calls, key)
				}
				g.mu.Unlock()
			}()
			// Outermost, so that what keeps the stream alive is dropped
			// after a cancel too.
			aw, end := g.track(&gatedWriter{ResponseWriter: w, cancelled: cancelled}, r)
			defer end()
			w = aw
		case req.Method == cancelledMethod:
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					key := gateKey{session, callerOf(r), id}
					g.mu.Lock()
					if ch, ok := g.calls[key]; ok {
						close(ch)
						delete(g.calls, key)
					}
					g.mu.Unlock()
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// batchCarriesCall reports whether body is a JSON-RPC batch with a call
// among its messages.
func batchCarriesCall(body []byte) bool {
	var batch []json.RawMessage
	if json.Unmarshal(body, &batch) != nil {
		return false
	}
	for _, raw := range batch {
		if m, err := jsonrpc.DecodeMessage(raw); err == nil {
			if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
				return true
			}
		}
	}
	return false
}

// gatedWriter drops what is written once its call is cancelled.
type gatedWriter struct {
	http.ResponseWriter
	cancelled <-chan struct{}
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	select {
	case <-w.cancelled:
		return len(p), nil
	default:
		return w.ResponseWriter.Write(p)
	}
}

// Unwrap lets http.ResponseController reach the connection (to flush and
// to set deadlines).
func (w *gatedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
