// Package client is the Go client of askbridge's HTTP API, and the home of
// the API's wire types, which the server uses too.
//
// An agent asks, then waits:
//
//	c := client.New("http://127.0.0.1:8080", os.Getenv("ASKBRIDGE_TOKEN"))
//	q, err := c.Ask(ctx, client.AskRequest{...})
//	res, err := c.Wait(ctx, q.ID) // blocks until a human answers, or ctx ends
//	// res.Resume.Text is fenced text for the model; res.Anthropic and
//	// res.OpenAI are the same, shaped as each API's tool result.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/retryafter"
	"github.com/askbridge/askbridge/adapters/internal/tracehttp"
	"github.com/askbridge/askbridge/core"
)

// DefaultPollTimeout is how long each long poll of Wait asks the server to
// hold the request. The server caps it at its own maximum. It stays under
// the idle timeouts of the proxies and load balancers commonly in front of
// a server (30 s for some, 60 s for most): a poll as long as one would be
// cut by it, and Wait would see a failure every poll rather than an open
// question. WithPollTimeout sets another.
const DefaultPollTimeout = 25 * time.Second

// Client calls one askbridge server with one bearer token. It is safe for
// concurrent use.
type Client struct {
	base  string
	token string
	hc    *http.Client
	poll  time.Duration
	// pause is the first pause before a retry, doubled on each failure
	// in a row up to 5 s (a test's is shorter).
	pause time.Duration
	// grace is how long past its timeout a long poll may go unanswered
	// before it is given up as lost (pollGrace; a test's is shorter).
	grace time.Duration
	// idle is how long an event stream may stay silent before it is
	// given up as lost and Follow resumes it (streamIdle; a test's is
	// shorter).
	idle time.Duration
	// reached is whether the server has answered a request of this
	// client at all, so its host exists (see misaddressed).
	reached atomic.Bool
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the http.Client requests go through. It should have
// no Timeout shorter than the poll timeout, or long polls fail; contexts
// bound each call instead.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithPollTimeout sets how long each long poll of Wait lasts.
func WithPollTimeout(d time.Duration) Option { return func(c *Client) { c.poll = d } }

// WithRetryPause sets the first pause before a retry of Ask, GetRetried,
// Wait and Follow (default 250 ms), doubled on each failure in a row. A
// pause of zero or less keeps the default: doubled, it would stay zero,
// and a wait on a server that is down would spin.
func WithRetryPause(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.pause = d
		}
	}
}

// New returns a client of the server at baseURL (scheme, host and any path
// prefix, such as "http://127.0.0.1:8080") presenting token.
func New(baseURL, token string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: http.DefaultClient, poll: DefaultPollTimeout,
		pause: 250 * time.Millisecond, grace: pollGrace, idle: streamIdle}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Get returns a question. With an agent's token the server sends the
// agent's view (AgentQuestion): only the fields the two views share are
// filled.
func (c *Client) Get(ctx context.Context, id core.QuestionID) (*Question, error) {
	return call[Question](ctx, c, http.MethodGet, "/v1/questions/"+url.PathEscape(string(id)), nil, nil)
}

// GetRetried is Get, tried again as Ask is when it fails on the way (the
// server unreachable, a 5xx), up to askAttempts times: for a caller that
// must know the server has the question before it waits on it, and
// should not give up on a replica that is restarting.
func (c *Client) GetRetried(ctx context.Context, id core.QuestionID) (*Question, error) {
	var q *Question
	err := c.retried(ctx, func() (err error) {
		q, err = c.Get(ctx, id)
		return err
	})
	return q, err
}

// List returns a page of open questions, hard-to-reverse first, then
// oldest. Pass the previous page's NextCursor for the next; limit 0 takes
// the server's default.
func (c *Client) List(ctx context.Context, cursor string, limit int) (*ListResponse, error) {
	q := url.Values{"state": {"open"}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return call[ListResponse](ctx, c, http.MethodGet, "/v1/questions", q, nil)
}

// Answer records an answer and returns exactly what was recorded. A
// question someone else closed first gives an *Error with status 409 whose
// message says who closed it, when and how.
func (c *Client) Answer(ctx context.Context, id core.QuestionID, req AnswerRequest) (*Outcome, error) {
	return call[Outcome](ctx, c, http.MethodPost, "/v1/questions/"+url.PathEscape(string(id))+"/answer", nil, req)
}

// Standing lists the standing approvals live now.
func (c *Client) Standing(ctx context.Context) ([]Standing, error) {
	l, err := call[StandingList](ctx, c, http.MethodGet, "/v1/approvals/standing", nil, nil)
	if err != nil {
		return nil, err
	}
	return l.Standing, nil
}

// RevokeStanding ends a standing approval: later asks are asked again.
func (c *Client) RevokeStanding(ctx context.Context, id string) (*Standing, error) {
	return call[Standing](ctx, c, http.MethodPost, "/v1/approvals/standing/"+url.PathEscape(id)+"/revoke", nil, nil)
}

// Decline closes the question without an answer; the agent resumes with a
// fixed text telling it to proceed on its own judgement (for an
// approval, without the call, which was not approved).
func (c *Client) Decline(ctx context.Context, id core.QuestionID) (*Outcome, error) {
	return call[Outcome](ctx, c, http.MethodPost, "/v1/questions/"+url.PathEscape(string(id))+"/decline", nil, nil)
}

// Cancel withdraws a question; reason may be empty. Cancelling is mostly
// an agent's act, so the question comes back in the agent's view, which
// an operator's token also decodes into (its other fields dropped).
func (c *Client) Cancel(ctx context.Context, id core.QuestionID, reason string) (*AgentOutcome, error) {
	var body any
	if reason != "" {
		body = CancelRequest{Reason: reason}
	}
	return call[AgentOutcome](ctx, c, http.MethodPost, "/v1/questions/"+url.PathEscape(string(id))+"/cancel", nil, body)
}

// MCPDoor reports whether the person driving this agent's MCP host may
// answer the question in the host (see AnswerInHost).
func (c *Client) MCPDoor(ctx context.Context, id core.QuestionID) (*MCPDoorResponse, error) {
	return call[MCPDoorResponse](ctx, c, http.MethodGet, "/v1/questions/"+url.PathEscape(string(id))+"/mcp", nil, nil)
}

// AnswerInHost records an answer the person driving this agent's MCP host
// gave there (through MCP elicitation): the decider is the mcp surface
// with the token's name, and the route must allow it. A question someone
// else closed first gives an *Error with status 409 saying who closed it.
func (c *Client) AnswerInHost(ctx context.Context, id core.QuestionID, req MCPAnswerRequest) (*AgentOutcome, error) {
	return call[AgentOutcome](ctx, c, http.MethodPost, "/v1/questions/"+url.PathEscape(string(id))+"/mcp/answer", nil, req)
}

// DigestQuery selects a digest. Since is required; a zero Until means now.
// Decider is "surface:id" (such as "slack:U123"), holding Roles; Person
// names a configured person; Route names one route.
type DigestQuery struct {
	Since, Until time.Time
	Decider      string
	Roles        []string
	Person       string
	Route        string
}

// Digest returns what was asked and closed in [Since, Until), and what is
// still open.
func (c *Client) Digest(ctx context.Context, dq DigestQuery) (*Digest, error) {
	q := url.Values{"since": {dq.Since.UTC().Format(time.RFC3339)}}
	if !dq.Until.IsZero() {
		q.Set("until", dq.Until.UTC().Format(time.RFC3339))
	}
	if dq.Decider != "" {
		q.Set("decider", dq.Decider)
	}
	for _, r := range dq.Roles {
		q.Add("role", r)
	}
	if dq.Person != "" {
		q.Set("person", dq.Person)
	}
	if dq.Route != "" {
		q.Set("route", dq.Route)
	}
	return call[Digest](ctx, c, http.MethodGet, "/v1/digest", q, nil)
}

// People lists the configured people and groups, without their accounts.
func (c *Client) People(ctx context.Context) (*Directory, error) {
	return call[Directory](ctx, c, http.MethodGet, "/v1/people", nil, nil)
}

// DirectiveQuery selects the directive text. Tier "" is the full text.
type DirectiveQuery struct {
	Autonomy, Tier, Role, Department string
}

// Directive returns the standing "ask rather than guess" text for a
// system prompt.
func (c *Client) Directive(ctx context.Context, dq DirectiveQuery) (string, error) {
	q := url.Values{"autonomy": {dq.Autonomy}}
	for k, v := range map[string]string{"tier": dq.Tier, "role": dq.Role, "department": dq.Department} {
		if v != "" {
			q.Set(k, v)
		}
	}
	out, err := call[DirectiveResponse](ctx, c, http.MethodGet, "/v1/directive", q, nil)
	if err != nil {
		return "", err
	}
	return out.Text, nil
}

// Events returns the events after seq since that the log holds now (the
// stream is read without following it).
func (c *Client) Events(ctx context.Context, since int64) ([]Event, error) {
	var out []Event
	_, err := c.stream(ctx, since, false, func(e Event) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// Follow calls fn for every event after seq since, then for each new one
// as it is logged, until ctx ends (it then returns ctx's error: give ctx a
// deadline to follow for a while) or fn fails. A dropped stream is resumed
// from the last event seen, with a growing pause, so a server restart
// loses nothing; so is one silent for longer than streamIdle, which the
// server's keep-alives never leave it. A server that names its
// Retry-After (a 503 while its store fails over, a 429 holding this
// address) is asked again no sooner.
func (c *Client) Follow(ctx context.Context, since int64, fn func(Event) error) error {
	pause := c.pause
	for {
		last, err := c.stream(ctx, since, true, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if last > since {
			since, pause = last, c.pause
		}
		var fnErr *callbackError
		if errors.As(err, &fnErr) {
			return fnErr.err
		}
		if errors.As(err, new(*badEventError)) || errors.Is(err, bufio.ErrTooLong) {
			return err // the same event would come again: retrying will not help
		}
		if err != nil && !c.transient(err) {
			return err // refused (a bad token, say), not even made, or sent to a wrong address: retrying will not help
		}
		if !backOff(ctx, pause, err) { // as Wait, the server's Retry-After when longer
			return ctx.Err()
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// badEventError is an event the client cannot read (a newer server's,
// say), which ends Follow: asked again from the same place, the same
// event would come again, for ever.
type badEventError struct{ err error }

func (e *badEventError) Error() string { return e.err.Error() }
func (e *badEventError) Unwrap() error { return e.err }

// callbackError marks an error returned by the caller's function, which
// ends Follow instead of being retried.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

// stream reads one SSE response, calling fn per event, and returns the
// last sequence number it saw. A response silent for c.idle (no headers,
// no event, no keep-alive) is given up with an error that is not ctx's:
// Follow asks again rather than wait on it for good (see streamIdle).
func (c *Client) stream(ctx context.Context, since int64, follow bool, fn func(Event) error) (int64, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(c.idle, func() { cancel(errStreamIdle) })
	defer idle.Stop()
	q := url.Values{"since": {strconv.FormatInt(since, 10)}, "follow": {strconv.FormatBool(follow)}}
	resp, err := c.send(ctx, http.MethodGet, "/v1/events", q, nil)
	if err != nil {
		return since, idleCause(ctx, err)
	}
	defer resp.Body.Close()
	last := since
	body := readFunc(func(p []byte) (int, error) {
		n, err := resp.Body.Read(p)
		if n > 0 {
			idle.Reset(c.idle)
		}
		return n, err
	})
	err = readSSE(body, func(m sseMessage) error {
		var e Event
		if err := json.Unmarshal([]byte(m.data), &e); err != nil {
			return &badEventError{fmt.Errorf("askbridge: event %s: %w", m.id, err)}
		}
		idle.Stop() // the caller's time is not the stream's silence
		defer idle.Reset(c.idle)
		if err := fn(e); err != nil {
			return &callbackError{err}
		}
		last = e.Seq
		return nil
	})
	return last, idleCause(ctx, err)
}

// streamIdle is how long an event stream may stay silent before stream
// gives it up: four of the server's keep-alives (one every 15 s) missed.
// Only a stream that is lost is that silent (a replica that stalled, a
// connection that died without a reset, which the operating system may
// keep for good), and only giving it up lets Follow resume it.
const streamIdle = time.Minute

// errStreamIdle is why a stream silent for streamIdle was given up.
var errStreamIdle = errors.New("askbridge: the event stream was silent too long (no event, no keep-alive): given up as lost")

// idleCause is err, saying so when it came of the stream being given up
// as silent (ctx's cause, see stream), rather than "context canceled",
// which Follow's caller would read as its own doing.
func idleCause(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errStreamIdle) {
		return fmt.Errorf("%w (%v)", errStreamIdle, err)
	}
	return err
}

// readFunc is an io.Reader of a function.
type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// call sends body as JSON (none when nil) and decodes a success as T.
func call[T any](ctx context.Context, c *Client, method, path string, q url.Values, body any) (*T, error) {
	return callWith[T](ctx, c, method, path, q, body, nil)
}

// callWith is call with extra request headers.
func callWith[T any](ctx context.Context, c *Client, method, path string, q url.Values, body any, hdr http.Header) (*T, error) {
	out, _, err := callStatus[T](ctx, c, method, path, q, body, hdr)
	return out, err
}

// callStatus is callWith, also returning the response's status (a
// success's: an error status is the error).
func callStatus[T any](ctx context.Context, c *Client, method, path string, q url.Values, body any, hdr http.Header) (*T, int, error) {
	resp, err := c.sendWith(ctx, method, path, q, body, hdr)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	out := new(T)
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return nil, 0, fmt.Errorf("askbridge: %s %s: decoding the response: %w", method, path, err)
	}
	return out, resp.StatusCode, nil
}

// send makes the request and turns an error status into an *Error. On
// success the caller closes the body.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, body any) (*http.Response, error) {
	return c.sendWith(ctx, method, path, q, body, nil)
}

// sendWith is send with extra request headers.
func (c *Client) sendWith(ctx context.Context, method, path string, q url.Values, body any, hdr http.Header) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, &requestError{fmt.Errorf("askbridge: encoding the request: %w", err)}
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, &requestError{fmt.Errorf("askbridge: %w", err)}
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	tracehttp.Inject(req) // a caller's trace goes on into the server
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("askbridge: %s %s: %w", method, path, err)
	}
	c.reached.Store(true)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, errorFrom(resp)
}

// errorFrom reads an error response, ours or anyone's.
func errorFrom(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var eb ErrorBody
	after := retryafter.Parse(resp.Header, time.Now())
	if json.Unmarshal(raw, &eb) == nil && eb.Error.Code != "" {
		return &Error{Status: resp.StatusCode, Code: string(eb.Error.Code), Message: eb.Error.Message, RetryAfter: after}
	}
	msg := strings.TrimSpace(string(raw))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &Error{Status: resp.StatusCode, Message: msg, RetryAfter: after}
}
