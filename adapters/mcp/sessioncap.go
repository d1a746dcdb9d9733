package mcp

import (
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An MCP session of the earlier revisions lives in the handler's memory
// (some 5.5 KB and a goroutine) until its client ends it, or it goes
// SessionIdle without a request; a client killed without ending its
// session leaves it there for that long. Nothing else bounds how many a
// caller opens, so one token could open them without end: each caller
// may hold MaxSessionsPerCaller at once, and its opening past that is
// refused with 429 until one of its sessions ends. The bound is many
// times what one caller's agents need, and leaves room for the sessions
// of agents killed in the last day.

// DefaultMaxSessionsPerCaller is Options.MaxSessionsPerCaller's default.
const DefaultMaxSessionsPerCaller = 256

// sessionCap counts the sessions each caller opened. The library says
// when a session opens (its id, on the response of the request that
// opened it) but not when one ends (a DELETE, its idle timer, a stop), so
// a caller's count may hold sessions that have ended since: a caller that
// reaches the bound has its count checked against the sessions the
// library still serves (live) before it is refused, and so is refused
// only for sessions that are live. A session's Close returns once the
// library has dropped it from live, so a session ended is never counted
// there.
type sessionCap struct {
	max  int
	idle time.Duration // SessionIdle, for the refusal's text
	live func() iter.Seq[*mcpsdk.ServerSession]
	log  *slog.Logger

	mu      sync.Mutex
	opening map[string]int                 // by caller: openings in progress
	ids     map[string]map[string]struct{} // by caller: the sessions it opened, some perhaps ended
}

func newSessionCap(max int, idle time.Duration, live func() iter.Seq[*mcpsdk.ServerSession], log *slog.Logger) *sessionCap {
	return &sessionCap{max: max, idle: idle, live: live, log: log, opening: map[string]int{}, ids: map[string]map[string]struct{}{}}
}

// wrap counts the sessions that next opens: a POST without a session id
// opens one (the library closes it again if its request is no
// initialize).
func (c *sessionCap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get(sessionHeader) != "" {
			next.ServeHTTP(w, r)
			return
		}
		caller := callerOf(r)
		if !c.reserve(caller) {
			c.refuse(w, r)
			return
		}
		defer func() { c.opened(caller, w.Header().Get(sessionHeader)) }()
		next.ServeHTTP(w, r)
	})
}

// reserve takes a place for an opening by caller, unless its sessions
// and openings fill its bound.
func (c *sessionCap) reserve(caller string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ids[caller])+c.opening[caller] >= c.max {
		c.forgetEnded(caller)
		if len(c.ids[caller])+c.opening[caller] >= c.max {
			return false
		}
	}
	c.opening[caller]++
	return true
}

// forgetEnded drops from caller's count the sessions the library no
// longer serves. One look over every live session: made only at the
// bound, so an opening within it costs nothing more.
func (c *sessionCap) forgetEnded(caller string) {
	mine := c.ids[caller]
	kept := make(map[string]struct{}, len(mine))
	for ss := range c.live() {
		if id := ss.ID(); id != "" {
			if _, ok := mine[id]; ok {
				kept[id] = struct{}{}
			}
		}
	}
	if len(kept) == 0 {
		delete(c.ids, caller)
		return
	}
	c.ids[caller] = kept
}

// opened ends an opening by caller, counting the session it opened, id
// ("" if none).
func (c *sessionCap) opened(caller, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opening[caller]--; c.opening[caller] <= 0 {
		delete(c.opening, caller)
	}
	if id == "" {
		return
	}
	if c.ids[caller] == nil {
		c.ids[caller] = map[string]struct{}{}
	}
	c.ids[caller][id] = struct{}{}
}

// refuse answers an opening past its caller's bound: 429, with a
// JSON-RPC error (carrying the request's id when it has one) that says
// how to free a place.
func (c *sessionCap) refuse(w http.ResponseWriter, r *http.Request) {
	c.log.Info("askbridge mcp: a session was refused: its caller holds the most sessions", "caller", callerOf(r), "most", c.max)
	id := json.RawMessage("null")
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(peekBody(r), &m) == nil && requestID(m.ID) {
		id = m.ID
	}
	writeRPCError(w, http.StatusTooManyRequests, id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf(
		"Too Many Requests: this caller already holds the most MCP sessions it may have open on this server at once (%d); "+
			"end the sessions it no longer uses (DELETE with their Mcp-Session-Id) or reuse one "+
			"(a session also ends after %s without a request)", c.max, c.idle)})
}
