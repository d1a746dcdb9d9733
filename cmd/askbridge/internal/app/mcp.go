package app

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/rs/zerolog"
)

// clientBackend lets "askbridge mcp" (a process an agent host starts) park
// questions on a running server: the stdio process holds no store of its
// own, so any number of agents share one bridge. It hands the MCP adapter
// the resume the server built, never one rebuilt from the agent's view of
// the question (which leaves people's words out by design), so the stdio
// tools return exactly what /mcp and the wait API return.
type clientBackend struct {
	c *client.Client
	// url and tokenFrom name the server and where the token came from, for
	// errors a model can act on.
	url, tokenFrom string
	// keys are the keys of asks that may have been parked (nil: none
	// kept).
	keys *askKeys
	// self is who the process asks as (nil: nothing known or kept).
	self *self
	// kept is the bridge's retention, for the tasks' ttlMs (nil: not
	// read).
	kept *kept
}

// self is the agent `askbridge mcp` asks as: its token's name, which the
// server gives every question the process parks. An agent's token reaches
// only that agent's questions; an admin's (the local admin token's, when
// ASKBRIDGE_TOKEN is unset) reaches every agent's, so the process holds
// it to those asked in its name, as /mcp holds its caller to its own
// (mcp.ServiceBackend): another agent's question reads as unknown (law
// 6), to a read as to a cancel.
type self struct {
	mu sync.Mutex
	// name is the token's name once known: the local admin token's from
	// the start, any other's from the first question the process parks.
	name core.AgentID
	// limited is set once the server is known to limit the token to its
	// own questions (it is an agent's).
	limited bool
}

func (s *self) known() (core.AgentID, bool) {
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name, s.limited
}

func (s *self) learn(name core.AgentID, limited bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if name != "" {
		s.name = name
	}
	s.limited = s.limited || limited
}

// mine is nil if q, as the server returned it, is the process's to see,
// and core.ErrNotFound if it is another agent's. With a token whose name
// is not known yet, it asks the server whether the token is an agent's,
// which the server limits itself: only an agent's token is refused the
// list of open questions. An admin's, before the process has parked
// anything, reaches nothing.
func (b clientBackend) mine(ctx context.Context, q *client.AgentQuestion) error {
	name, limited := b.self.known()
	switch {
	case limited:
		return nil
	case name != "":
		if q == nil || q.Agent != name {
			return core.ErrNotFound
		}
		return nil
	}
	_, err := b.c.List(ctx, "", 1)
	var e *client.Error
	if errors.As(err, &e) && e.Status == http.StatusForbidden {
		b.self.learn("", true)
		return nil
	}
	if err != nil {
		return b.coded(err)
	}
	return core.ErrNotFound
}

// own is mine for question id, read first, unless the server limits the
// token itself.
func (b clientBackend) own(ctx context.Context, id core.QuestionID) error {
	if _, limited := b.self.known(); limited {
		return nil
	}
	res, err := b.c.WaitOnce(ctx, id, 0)
	if err != nil {
		return b.coded(err)
	}
	return b.mine(ctx, res.Question)
}

var _ mcp.Backend = clientBackend{}

func (b clientBackend) Ask(ctx context.Context, in core.AskInput) (*core.Question, error) {
	q, _, err := b.AskOrRepeat(ctx, in)
	return q, err
}

var _ mcp.RepeatAsker = clientBackend{}

// AskOrRepeat is Ask, saying whether the server took it as a repeat, so
// that the door refuses a tool_call_id reused long after its question
// closed, as over /mcp (mcp.RepeatAsker).
func (b clientBackend) AskOrRepeat(ctx context.Context, in core.AskInput) (*core.Question, bool, error) {
	b.learn(ctx) // for the task the ask may return
	req := client.AskRequestOf(in)
	keyless := req.IdempotencyKey == "" && req.ToolCallID == "" && b.keys != nil
	var id [sha256.Size]byte
	if keyless {
		raw, _ := json.Marshal(req) // the key is not in it (json:"-")
		id = sha256.Sum256(raw)
		req.IdempotencyKey = b.keys.get(id)
	}
	q, repeat, err := b.c.AskOrRepeat(ctx, req)
	if q != nil {
		b.self.learn(q.Agent, false) // the server asks in the token's name
	}
	if keyless {
		var unknown *client.AskError
		if errors.As(err, &unknown) {
			b.keys.put(id, unknown.Key)
		} else {
			b.keys.forget(id)
		}
	}
	return fromAgentView(q), repeat, b.coded(err)
}

// askKeys remember the Idempotency-Key of each ask the client gave up on
// not knowing whether it was parked (client.AskError), by the ask's
// request, for an hour: the host's retry of the same tool call then gets
// that question rather than asking people twice. An ask that was parked
// or refused is forgotten, so asking the same thing again later parks
// anew.
type askKeys struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]askKey
}

type askKey struct {
	key string
	at  time.Time
}

const (
	askKeysKept = 64
	askKeyTTL   = time.Hour
)

func newAskKeys() *askKeys { return &askKeys{m: map[[sha256.Size]byte]askKey{}} }

func (k *askKeys) get(id [sha256.Size]byte) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.m[id]; ok && time.Since(e.at) < askKeyTTL {
		return e.key
	}
	return ""
}

func (k *askKeys) put(id [sha256.Size]byte, key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	for i, e := range k.m {
		if now.Sub(e.at) >= askKeyTTL {
			delete(k.m, i)
		}
	}
	if _, ok := k.m[id]; !ok && len(k.m) >= askKeysKept {
		var oldest [sha256.Size]byte
		var oldestAt time.Time
		for i, e := range k.m {
			if oldestAt.IsZero() || e.at.Before(oldestAt) {
				oldest, oldestAt = i, e.at
			}
		}
		delete(k.m, oldest)
	}
	k.m[id] = askKey{key: key, at: now}
}

func (k *askKeys) forget(id [sha256.Size]byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, id)
}

// fromAgentView is the agent's view of a question as the core question
// the MCP door works with: only what the agent may see is filled, which
// is all the door reads (kind, text, options, items, the call, which
// items and calls are decided, and who closed it by surface).
func fromAgentView(v *client.AgentQuestion) *core.Question {
	if v == nil {
		return nil
	}
	q := &core.Question{ID: v.ID, Kind: v.Kind, Agent: v.Agent, RunID: v.RunID, ToolCallID: v.ToolCallID,
		Labels: v.Labels, Text: v.Text, Context: v.Context, Reversibility: v.Reversibility, Route: v.Route,
		CreatedAt: v.CreatedAt, Deadline: v.Deadline, Timeout: v.Timeout, OnTimeout: v.OnTimeout,
		MaxReasks: v.MaxReasks, Renotified: v.Renotified, Quorum: v.Quorum, State: v.State}
	for _, o := range v.Options {
		q.Options = append(q.Options, core.Option{ID: o.ID, Title: o.Title, Writeup: o.Writeup, Recommended: o.Recommended})
	}
	for _, it := range v.Items {
		fi := core.FormItem{ID: it.ID, Question: it.Question}
		for _, o := range it.Options {
			fi.Options = append(fi.Options, core.FormOption{ID: o.ID, Label: o.Label, Description: o.Description, Recommended: o.Recommended})
		}
		q.Items = append(q.Items, fi)
	}
	toolCall := func(c client.AgentToolCall) core.ToolCall {
		return core.ToolCall{Tool: c.Tool, Arguments: c.Arguments, ArgumentsSHA256: c.ArgumentsSHA256, Editable: c.Editable, Standing: c.Standing}
	}
	if v.Call != nil {
		c := toolCall(*v.Call)
		q.Call = &c
	}
	for _, c := range v.Calls {
		q.Calls = append(q.Calls, core.BatchCall{ToolCallID: c.ToolCallID, ToolCall: toolCall(c.AgentToolCall)})
	}
	// Which items and calls are decided, so the host's form offers the
	// rest; the words and who are not in the agent's view.
	for _, a := range v.Answers {
		q.Answers = append(q.Answers, core.ItemAnswer{ItemID: a.ItemID, OptionID: a.OptionID, Decider: core.Decider{Surface: a.Surface}, At: a.At})
	}
	if r := v.Resolution; r != nil {
		q.Resolution = &core.Resolution{State: r.State, ClosedBy: r.ClosedBy, At: r.At, Decider: core.Decider{Surface: r.Surface},
			OptionID: r.OptionID, Approved: r.Approved, ArgumentsSHA256: r.ArgumentsSHA256}
	}
	return q
}

// Wait long-polls until the question closes or d passes; the server may
// cap one poll below d, so it polls again for what is left.
func (b clientBackend) Wait(ctx context.Context, id core.QuestionID, d time.Duration) (mcp.Status, error) {
	b.learn(ctx) // for the task the status may be shown as
	end := time.Now().Add(d)
	for {
		res, err := b.c.WaitOnce(ctx, id, max(time.Until(end), 0))
		if err != nil {
			if ctx.Err() != nil {
				return mcp.Status{}, ctx.Err()
			}
			return mcp.Status{}, b.coded(err)
		}
		if err := b.mine(ctx, res.Question); err != nil {
			return mcp.Status{}, err
		}
		if res.State.Closed() || !time.Now().Before(end) {
			st := mcp.Status{QuestionID: res.QuestionID, State: res.State, Resume: res.Resume}
			if res.Question != nil {
				st.Kind, st.AskedAt, st.Deadline, st.Question = res.Question.Kind, res.Question.CreatedAt, res.Question.Deadline, fromAgentView(res.Question)
				if r := res.Question.Resolution; r != nil {
					st.ClosedAt = r.At
				}
			}
			for _, c := range res.Calls {
				st.Calls = append(st.Calls, core.CallResult{ToolCallID: c.ToolCallID, Resume: c.Resume})
			}
			return st, nil
		}
	}
}

// HostMayAnswer asks the server, which alone knows the routes.
func (b clientBackend) HostMayAnswer(ctx context.Context, id core.QuestionID) (bool, error) {
	if err := b.own(ctx, id); err != nil {
		return false, err
	}
	res, err := b.c.MCPDoor(ctx, id)
	if err != nil {
		return false, b.coded(err)
	}
	return res.MayAnswer, nil
}

// AnswerInHost records the host's answer on the server, which names the
// decider after this process's token. A loser gets the question as it
// was closed, read back, so the host hears who answered first.
func (b clientBackend) AnswerInHost(ctx context.Context, in core.AnswerInput) error {
	if err := b.own(ctx, in.QuestionID); err != nil {
		return err
	}
	_, err := b.c.AnswerInHost(ctx, in.QuestionID, client.MCPAnswerRequest{Answer: in.Text, ChosenOptionID: in.OptionID, Items: in.Items})
	var e *client.Error
	if errors.As(err, &e) && e.Status == http.StatusConflict {
		if res, gerr := b.c.WaitOnce(ctx, in.QuestionID, 0); gerr == nil && res.State.Closed() && res.Question != nil {
			return &core.ClosedError{Question: fromAgentView(res.Question)}
		}
	}
	return b.coded(err)
}

// Withdraw cancels the question on the server, which names the agent
// after this process's token and limits an agent's token to the agent's
// own (an admin's, the process limits itself: own). A loser gets the
// question as it was closed, as AnswerInHost's does.
func (b clientBackend) Withdraw(ctx context.Context, id core.QuestionID, reason string) error {
	if err := b.own(ctx, id); err != nil {
		return err
	}
	_, err := b.c.Cancel(ctx, id, reason)
	var e *client.Error
	if errors.As(err, &e) && e.Status == http.StatusConflict {
		if res, gerr := b.c.WaitOnce(ctx, id, 0); gerr == nil && res.State.Closed() && res.Question != nil {
			return &core.ClosedError{Question: fromAgentView(res.Question)}
		}
	}
	return b.coded(err)
}

// coded turns the server's refusal into core's error, so the MCP tool
// shows the agent the server's own message ("a decision needs exactly one
// recommended option") instead of a generic internal error; a refused
// token and an unreachable server get messages that say what to do.
func (b clientBackend) coded(err error) error {
	if err == nil {
		return nil
	}
	var e *client.Error
	if !errors.As(err, &e) {
		return &mcp.UnavailableError{Err: err, Message: fmt.Sprintf(
			"askbridge server at %s is not reachable (%s); start it with `askbridge serve`, or set ASKBRIDGE_URL to where it runs", b.url, cause(err))}
	}
	switch {
	case e.Status == http.StatusUnauthorized:
		return &core.Error{Code: core.CodeForbidden, Op: "askbridge server", Message: fmt.Sprintf(
			"the askbridge server at %s refused the token from %s: set it to an agent token from the server's configuration", b.url, b.tokenFrom)}
	case e.Status == http.StatusForbidden && e.Code == string(core.CodeForbidden) && strings.HasPrefix(e.Message, "a token with role"):
		return &core.Error{Code: core.CodeForbidden, Op: "askbridge server", Message: fmt.Sprintf(
			"the askbridge server at %s refused the token from %s: %s; the MCP tools need an agent token", b.url, b.tokenFrom, e.Message)}
	case e.Unavailable():
		// The server's store is failing over: a wait goes on waiting.
		return &mcp.UnavailableError{Err: err, Message: fmt.Sprintf(
			"the askbridge server at %s: %s", b.url, e.Message)}
	case e.Code != "" && e.Code != string(core.CodeInternal):
		return &core.Error{Code: core.Code(e.Code), Op: "askbridge server", Message: e.Message}
	case e.Code == "":
		// Not the API's answer: a proxy, or something else on the port.
		return &mcp.UnavailableError{Err: err, Message: fmt.Sprintf(
			"askbridge server at %s did not answer as askbridge (HTTP %d: %s); check ASKBRIDGE_URL", b.url, e.Status, e.Message)}
	}
	return err
}

// cause names why a request got no response, in a few words.
func cause(err error) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &dns):
		return "no such host " + dns.Name
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT):
		return "timed out"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// mcpLogLevel reads ASKBRIDGE_LOG_LEVEL for the stdio process. Its stderr
// goes to the host's log panel, so by default it carries warnings and
// errors only.
func mcpLogLevel(raw string) (slog.Level, error) {
	if strings.TrimSpace(raw) == "" {
		return slog.LevelWarn, nil
	}
	lvl, err := parseLogLevel(raw)
	switch {
	case err != nil:
		return 0, err
	case lvl <= zerolog.DebugLevel:
		return slog.LevelDebug, nil
	case lvl == zerolog.InfoLevel:
		return slog.LevelInfo, nil
	case lvl == zerolog.WarnLevel:
		return slog.LevelWarn, nil
	}
	return slog.LevelError, nil
}

func cmdMCP(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("mcp", stderr, "mcp [--run ID] [--route ROUTE]  (the MCP tools over stdio)")
	s, err := readEnv(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	run := fs.String("run", s.Client.RunID, "the run id questions belong to when a tool call gives none")
	route := fs.String("route", "", "the route questions take when a tool call gives none")
	if err := fs.Parse(args); err != nil || !noArgs(fs, stderr) {
		return exitUsage
	}
	level, err := mcpLogLevel(s.LogLevel)
	if err != nil {
		return fail(stderr, err)
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	b := clientBackend{c: c, url: serverURL(s), tokenFrom: "ASKBRIDGE_TOKEN", keys: newAskKeys(), self: &self{}, kept: &kept{}}
	if s.Client.Token == "" {
		b.tokenFrom = "the local admin token file (ASKBRIDGE_TOKEN is not set)"
		b.self.name = adminTokenName
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})) // stdout carries the protocol
	opts := mcp.Options{RunID: core.RunID(*run), Route: *route, Version: versionString(), Logger: log,
		Retention: b.kept.retention} // a task's ttlMs, as over /mcp
	if err := mcp.ServeStdio(ctx, b, opts); err != nil && ctx.Err() == nil {
		return fail(stderr, err)
	}
	return 0
}
