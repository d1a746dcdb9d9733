package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Task status notifications over streamable HTTP. A 2026-07-28 host
// listens for them with subscriptions/listen naming task ids; the SDK's
// listen knows no task ids, so such a request is served here, as the
// extension and the subscriptions pattern say: the acknowledgement first
// (with the ids agreed: the host's own tasks), then one notifications/tasks
// per task when its question closes, the same task tasks/get would return
// then, and, once every task named has ended, a graceful end of the
// stream (the listen request's response). Like every task method it
// reads the questions from the store: any replica serves it, and a stream
// a replica drops is opened again on another. Hosts that do not listen
// poll tasks/get.
//
// A stream holds a connection, and a goroutine for each task it follows,
// for as long as a person takes, so the streams following one question
// on a server are bounded as the calls waiting on it are (waiters.go,
// Options.MaxWaitsPerQuestion, counted apart from the calls): past the
// bound the acknowledgement leaves the task out, as it leaves out a task
// that is not the host's, and the host polls tasks/get for it.

const (
	methodListen  = "subscriptions/listen"
	methodAcked   = "notifications/subscriptions/acknowledged"
	methodTaskNtf = "notifications/tasks"
	// maxListenTasks bounds the distinct task ids one listen looks at (the
	// first ones it names), and so the ids its stream follows: the ack
	// says which were agreed, and a host listens again for the rest.
	maxListenTasks = 100
)

// taskListen is a subscriptions/listen request that names task ids.
type taskListen struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta          map[string]any `json:"_meta"`
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	} `json:"params"`
}

// taskListenOf returns r's subscriptions/listen request if it names task
// ids, or nil (the SDK serves everything else).
func taskListenOf(r *http.Request) *taskListen {
	body := peekBody(r)
	if !bytes.Contains(body, []byte(methodListen)) {
		return nil // most requests: no need to decode them twice
	}
	var l taskListen
	if json.Unmarshal(body, &l) != nil || l.Method != methodListen || len(l.ID) == 0 || len(l.Params.Notifications.TaskIDs) == 0 {
		return nil
	}
	return &l
}

// listenTasks serves one task listen stream until its tasks have all
// ended, the host closes it, its token no longer holds, or the server
// stops.
func (h *handler) listenTasks(w http.ResponseWriter, r *http.Request, l *taskListen) {
	if rebinding(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	if !requestID(l.ID) {
		// It cannot be echoed, as the stream's subscription id nor as its
		// response's. (The SDK refuses an object, an array or a boolean
		// as the id of the other methods with HTTP 400 too; a null it
		// reads as a notification's, a fraction it truncates.)
		writeRPCError(w, http.StatusBadRequest, json.RawMessage("null"),
			&jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: a request's id is a string or an integer"})
		return
	}
	if e := listenRefused(r, l); e != nil {
		writeRPCError(w, http.StatusBadRequest, l.ID, e)
		return
	}
	caps := capsOf(nil, l.Params.Meta)
	if !declaresTasks(caps) {
		// 400, as the SDK answers this code on 2026-07-28 for the other
		// task methods.
		writeRPCError(w, http.StatusBadRequest, l.ID, missingCapability().(*jsonrpc.Error))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if h.opts.Stop != nil {
		defer context.AfterFunc(h.opts.Stop, cancel)()
	}
	ctx = context.WithValue(ctx, extraKey{}, &mcpsdk.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header})

	// Never null: the acknowledgement's taskIds is an array, empty when
	// none of the ids named is the host's.
	agreed := []string{}
	looked := make(map[string]bool, maxListenTasks)
	// Each task followed holds a place among its question's listeners
	// until its follower ends; the deferred release frees those of a
	// stream that ends first (a release frees its place once).
	places := make(map[string]func(), maxListenTasks)
	defer func() {
		for _, release := range places {
			release()
		}
	}()
	var crowded []string
	for _, id := range l.Params.Notifications.TaskIDs {
		if len(looked) == maxListenTasks {
			break // one listen costs at most maxListenTasks reads, however many ids it names
		}
		if looked[id] {
			continue
		}
		looked[id] = true
		// Counted before the task is read, as a wait is (waiters.go): a
		// crowded task is left out whoever's it is, so the bound tells a
		// stranger nothing, and costs no read.
		release, ok := h.listening.Take(core.QuestionID(id), h.opts.MaxWaitsPerQuestion)
		if !ok {
			crowded = append(crowded, id)
			continue
		}
		if _, err := h.ownTask(ctx, id); err != nil {
			release() // another agent's, or an unknown id, is left out
			continue
		}
		agreed = append(agreed, id)
		places[id] = release
	}
	if len(crowded) > 0 {
		h.opts.Logger.Info("askbridge mcp: a task listen was not agreed tasks whose questions have the most listen streams",
			"tasks", crowded, "most", h.opts.MaxWaitsPerQuestion)
	}
	sub := map[string]any{"io.modelcontextprotocol/subscriptionId": l.ID}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var mu sync.Mutex
	send := func(msg any) {
		b, err := json.Marshal(msg)
		if err != nil {
			h.opts.Logger.Error("askbridge mcp: task notification not encoded", "err", err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
		_ = http.NewResponseController(w).Flush()
	}
	send(map[string]any{"jsonrpc": "2.0", "method": methodAcked, "params": map[string]any{
		"_meta": sub, "notifications": map[string]any{"taskIds": agreed}}})

	var wg sync.WaitGroup
	var ended atomic.Int32
	var panicked atomic.Bool
	guard := func(what string) {
		// The backstop taskMiddleware is under every other method, for
		// the listen's own goroutines, which nothing else recovers: a
		// panic would end the whole process. It is logged, the stream's
		// other goroutines stop, and the listen is answered with an
		// internal error.
		if v := recover(); v != nil {
			h.opts.Logger.Error("askbridge mcp: a task listen stream's "+what+" panicked", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			panicked.Store(true)
			cancel()
		}
	}
	for _, id := range agreed {
		wg.Go(func() {
			defer guard("follower")
			defer places[id]() // the task's place, once it is followed no more
			t, ok := h.followTask(ctx, id, caps)
			if !ok {
				if ctx.Err() == nil {
					// This task cannot be followed any longer (the store
					// unreachable too long, the question gone): the stream
					// ends without its response, so that the host listens
					// again, rather than stay open telling nothing of it.
					h.opts.Logger.Warn("askbridge mcp: a task listen stream ends: it cannot follow a task", "task", id)
					cancel()
				}
				return
			}
			if !stillHolds(ctx) {
				cancel() // the task carries the answer: not for a token removed meanwhile
				return
			}
			send(map[string]any{"jsonrpc": "2.0", "method": methodTaskNtf, "params": taskNotice{Meta: sub, task: t}})
			ended.Add(1)
		})
	}
	alive := make(chan struct{})
	var beat sync.WaitGroup
	beat.Go(func() {
		defer guard("keep-alive")
		h.keepListening(ctx, cancel, alive, w, &mu)
	})
	wg.Wait()
	close(alive)
	beat.Wait()
	if panicked.Load() {
		send(map[string]any{"jsonrpc": "2.0", "id": l.ID, "error": errInternal})
		return
	}
	// The closing response says every task named has ended: a stream
	// whose following failed (the store unreachable too long) or that was
	// ended (its token removed, the server stopping) ends without it, and
	// the host listens again.
	if ctx.Err() == nil && int(ended.Load()) == len(agreed) {
		send(map[string]any{"jsonrpc": "2.0", "id": l.ID, "result": map[string]any{"resultType": resultComplete, "_meta": sub}})
	}
}

// requestID reports whether raw is a JSON-RPC request id as MCP has one
// (RequestId in testdata/tasks/schema.json): a string, or an integer
// within what a JSON number holds exactly.
func requestID(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return true
	case float64:
		return v == math.Trunc(v) && math.Abs(v) <= 1<<53-1
	}
	return false
}

// listenRefused is the error for a listen that the SDK's handler would
// refuse, with the code that handler gives, or nil: its version header must
// match its _meta, its Mcp-Method header must name the method, and the
// version must be one askbridge serves. Without the last check a listen
// of a revision askbridge does not speak was served as 2026-07-28's,
// while every other request of that revision is refused with -32022.
func listenRefused(r *http.Request, l *taskListen) *jsonrpc.Error {
	version, _ := l.Params.Meta[mcpsdk.MetaKeyProtocolVersion].(string)
	if version == "" || version != r.Header.Get(versionHeader) {
		return &jsonrpc.Error{Code: mcpsdk.CodeHeaderMismatch,
			Message: fmt.Sprintf("the %s header must match the request's _meta %q", versionHeader, mcpsdk.MetaKeyProtocolVersion)}
	}
	if m := r.Header.Get(methodHeader); m != methodListen {
		return &jsonrpc.Error{Code: mcpsdk.CodeHeaderMismatch,
			Message: fmt.Sprintf("the %s header must name the request's method, %q (it is %q)", methodHeader, methodListen, m)}
	}
	if !slices.Contains(protocolVersions, version) {
		data, _ := json.Marshal(mcpsdk.UnsupportedProtocolVersionData{Supported: protocolVersions, Requested: version})
		return &jsonrpc.Error{Code: mcpsdk.CodeUnsupportedProtocolVersion,
			Message: fmt.Sprintf("protocol version %q is not supported by this server", version), Data: data}
	}
	return nil
}

// methodHeader is the streamable transport's header naming a request's
// method (2026-07-28).
const methodHeader = "Mcp-Method"

// keepListening writes keepAliveComment on a listen stream every wait
// slice until alive closes, so that a proxy does not cut a stream idle
// between the acknowledgement and a task's end (keepalive.go); and ends
// the stream (cancel) once its caller's token no longer holds
// (Options.Still), as a waiting call ends.
func (h *handler) keepListening(ctx context.Context, cancel context.CancelFunc, alive <-chan struct{}, w http.ResponseWriter, mu *sync.Mutex) {
	t := time.NewTicker(h.opts.WaitSlice)
	defer t.Stop()
	for {
		select {
		case <-alive:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if !stillHolds(ctx) {
				cancel()
				return
			}
			func() {
				mu.Lock()
				defer mu.Unlock() // a panic in the write (guard) must leave the stream's lock free for its last answer
				_ = writeKeepAlive(w)
			}()
		}
	}
}

// taskNotice is notifications/tasks' params: the task, with the stream's
// subscription id.
type taskNotice struct {
	Meta map[string]any `json:"_meta"`
	task
}

// followTask waits until the task's question closes and returns the task
// then; false if ctx ended first or the question can no longer be read.
func (h *handler) followTask(ctx context.Context, taskID string, caps *mcpsdk.ClientCapabilities) (task, bool) {
	failures := 0
	for ctx.Err() == nil {
		st, err := h.b.Wait(ctx, core.QuestionID(taskID), h.opts.WaitSlice)
		switch {
		case err == nil && st.State.Closed():
			t, err := h.taskOf(ctx, st, caps)
			if err != nil {
				h.opts.Logger.Warn("askbridge mcp: task notification not built", "task", taskID, "err", err)
				return task{}, false
			}
			return t, true
		case err == nil, errors.Is(err, context.DeadlineExceeded), ctx.Err() != nil:
		case transient(err):
			if failures++; failures >= maxWaitFailures || !loops.Sleep(ctx, h.opts.WaitSlice) {
				return task{}, false
			}
		default:
			return task{}, false // purged, say: nothing more to tell
		}
	}
	return task{}, false
}

// writeRPCError answers a request with a JSON-RPC error.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

// rebinding reports a request that reached a loopback address under a
// name that is not loopback: a page's DNS rebinding attack. The SDK's
// handler refuses these; this path, which it does not serve, does too.
func rebinding(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && loopback(local.String()) && !loopback(r.Host)
}

// loopback reports whether addr (host, or host:port) names this machine.
func loopback(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
