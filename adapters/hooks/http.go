package hooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/internal/apierror"
	"github.com/askbridge/askbridge/core"
)

// Headers of a hook's response, for the "askbridge hook" command and for
// people reading a log; the hosts read only the body.
const (
	// HeaderQuestionID names the question the prompt was asked as. It is
	// sent before the wait, so a command killed mid-wait can withdraw it.
	HeaderQuestionID = "Askbridge-Question-Id"
)

// Why a hook's question is withdrawn.
const (
	// ReasonHostStopped: the host stopped waiting on the hook (it killed
	// the command or closed the request), which it does when the person at
	// the keyboard answered its own prompt first, and also when the hook's
	// own timeout ran out: askbridge cannot tell which, so it says both.
	ReasonHostStopped = "the host stopped waiting (answered at the keyboard, or its hook timed out)"
	// ReasonNoDecision: the "askbridge hook" command got no decision from
	// askbridge within its bound (a hung server), and gave up on it: the
	// host, still waiting on the command, is about to fall back to its
	// own prompt, and the cards say which side gave up.
	ReasonNoDecision = "the hook got no decision from askbridge in time: left to the host's own prompt"
	// reasonGaveUp: the hook's wait ran out, so the host is about to fall
	// back to its own prompt.
	reasonGaveUp = "no answer in time: left to the host's own prompt"
	// reasonStopping: askbridge is stopping (Options.Stop), which ends
	// every wait however young; the host falls back to its own prompt.
	reasonStopping = "askbridge is stopping: left to the host's own prompt"
)

// MaxInputBytes caps a hook input, as the API caps a request body.
const MaxInputBytes = 1 << 20

// waitSlack is how long past its wait a hook's response may take to write.
const waitSlack = 30 * time.Second

// Service is what the hook door needs of core.
type Service interface {
	// Pin holds the configuration in force for the rules the door runs
	// to choose a prompt's ask and for the ask itself (pinned).
	Pin() *core.Pinned
	Watch(id core.QuestionID) (*core.Watcher, error)
	Cancel(ctx context.Context, in core.CancelInput) (core.Outcome, error)
	Get(ctx context.Context, id core.QuestionID) (*core.Question, error)
	EveryCallCovered(in core.AskInput) bool
	CallCovered(in core.AskInput) bool
	GrantOf(ctx context.Context, q *core.Question) (*core.Standing, error)
	Values() core.Values
}

// pinned is what the door needs of one configuration held for a prompt
// (core.Pinned): the rules AskAs runs to choose the ask, and the ask, are
// read from one configuration, so a reload between them cannot have one
// configuration choose what another decides (two configurations that
// each deny a network access prompt would together allow it).
type pinned interface {
	Evaluate(in core.AskInput) (core.RuleVerdict, error)
	AskOrRepeat(ctx context.Context, in core.AskInput) (*core.Question, bool, error)
}

// Options configure the hook door.
type Options struct {
	// Agent is the agent whose token made r: whoever mounts the handler
	// authenticates it (an agent token) before the handler runs.
	Agent func(r *http.Request) core.AgentID
	// MaxWait bounds every wait, and is the wait when ?wait= is absent.
	MaxWait time.Duration
	// Stop, when done, ends every wait: the program is stopping, and the
	// hosts fall back to their own prompts.
	Stop context.Context
	Log  zerolog.Logger
	// Still, when set, returns for a request the check that its caller
	// still holds what let it in (a reload may remove the agent's token):
	// made once the wait ends, so a prompt whose token no longer holds is
	// handed no approval from the answer, and gets what a prompt whose
	// token is refused at the door gets (FailedAsk). A deny is still
	// handed over (door.removed).
	Still func(*http.Request) func(context.Context) bool
}

// Handler answers a host's HTTP hook, POST /v1/hooks/{host}: the body is
// the host's hook input, asked as an approval by the calling agent; the
// response is the host's decision JSON once the question closes, or an
// empty body (no decision: the host asks at the keyboard) for a decline, a
// timeout, an expiry or a cancel (but where that would let a Codex
// PreToolUse call run unasked: decide). ?route= names the route; ?wait=
// bounds the wait (a Go duration, MaxWait at most and by default): set it
// a little under the hook's own timeout. Either given with no value is
// refused (emptyParam). The question is due when the
// wait ends (dueSlack); still open then, or when the caller goes away,
// it is withdrawn, so nothing is left parked that nobody waits for.
// Errors are askbridge's error shape.
func Handler(svc Service, opts Options) http.Handler {
	if opts.Stop == nil {
		opts.Stop = context.Background()
	}
	return &door{svc: svc, opts: opts}
}

type door struct {
	svc  Service
	opts Options
}

func (d *door) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := core.ErrorCode(err)
	if code == core.CodeInternal {
		d.opts.Log.Error().Err(err).Str("path", r.URL.Path).Msg("hook")
	}
	apierror.Write(w, apierror.Status(code), code, core.ErrorMessage(err))
}

// refuse answers a prompt that could not be asked. Where the host reads
// a failed hook as leaving the call to its own permission rules, which
// may run it unasked (Claude Code's PreToolUse), the answer is instead
// the decision a prompt nobody answered gets (Output: "ask", the person
// at the keyboard decides), with why; so an agent cannot get its calls
// past the hook by making the ask fail (arguments over the limit, its own
// run ended). Every other prompt gets the error.
func (d *door) refuse(w http.ResponseWriter, r *http.Request, p Prompt, err error) {
	if !answerFailed(w, p, err) {
		d.fail(w, r, err)
		return
	}
	d.opts.Log.Warn().Err(err).Str("path", r.URL.Path).Msg("hook: not asked; the host asks at the keyboard")
}

// answerFailed writes FailedAsk's answer for p, when it has one, and
// reports whether it did.
func answerFailed(w http.ResponseWriter, p Prompt, err error) bool {
	out, ok := FailedAsk(p, err)
	if ok {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	}
	return ok
}

// Unread answers a hook request refused before its input was read (the
// program's token check): as FailedAsk says for the prompt the input
// declares, or else with status and the error. A refused token must not
// leave a Claude Code PreToolUse call to the host's own rules; nor may
// an address held for wrong tokens (429, Held), which the agent can
// bring about, leave a Codex PreToolUse call to Codex's.
func Unread(w http.ResponseWriter, r *http.Request, status int, err error) {
	if status == http.StatusTooManyRequests {
		err = Held(err)
	}
	// Refused before routing, r has no path values: the host is the
	// path's last segment (POST /v1/hooks/{host}).
	host, herr := ParseHost(path.Base(r.URL.Path))
	body, _ := io.ReadAll(io.LimitReader(r.Body, MaxInputBytes))
	if herr == nil && answerFailed(w, Sniff(host, body), err) {
		return
	}
	apierror.Write(w, status, core.ErrorCode(err), core.ErrorMessage(err))
}

// early answers a request refused before its input parsed (a bad or
// empty wait, an empty route, an input over the limit or not a hook
// input), as refuse does, for the prompt the input declares (Sniff).
func (d *door) early(w http.ResponseWriter, r *http.Request, host Host, body []byte, status int, err error) {
	if answerFailed(w, Sniff(host, body), err) {
		d.opts.Log.Warn().Err(err).Str("path", r.URL.Path).Msg("hook: not asked")
		return
	}
	apierror.Write(w, status, core.ErrorCode(err), core.ErrorMessage(err))
}

func (d *door) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, err := ParseHost(r.PathValue("host"))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxInputBytes))
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		d.early(w, r, host, body, http.StatusRequestEntityTooLarge, invalid("the hook input is larger than the limit of 1 MiB"))
		return
	}
	if err != nil {
		d.early(w, r, host, body, http.StatusBadRequest, invalid("could not read the hook input: %v", err))
		return
	}
	if err := emptyParam(r.URL.Query(), d.opts.MaxWait); err != nil {
		d.early(w, r, host, body, http.StatusBadRequest, err)
		return
	}
	wait := d.opts.MaxWait
	if raw := r.URL.Query().Get("wait"); raw != "" {
		asked, err := core.ParseDuration(raw)
		if err != nil || asked <= 0 {
			d.early(w, r, host, body, http.StatusBadRequest, invalid("wait %q is not a duration: write a positive %s", raw, core.DurationForms))
			return
		}
		wait = min(asked, d.opts.MaxWait)
	}
	p, err := Parse(host, body)
	if err != nil {
		d.early(w, r, host, body, http.StatusBadRequest, err)
		return
	}
	agent := d.opts.Agent(r)
	pin := d.svc.Pin()
	p, in, err := p.AskAs(agent, r.URL.Query().Get("route"), pin.Evaluate)
	var q *core.Question
	if err == nil {
		// The question is due when the door stops waiting for it
		// (dueSlack). The ask is not cut short by the caller going away:
		// a question stored as the caller left must still be seen, and
		// withdrawn, below.
		in.Timeout = wait + dueSlack
		q, err = d.ask(context.WithoutCancel(r.Context()), pin, p, in)
	}
	pin.Close() // the rules have decided; the wait holds no configuration
	if err != nil {
		d.refuse(w, r, p, err)
		return
	}
	w.Header().Set(HeaderQuestionID, string(q.ID))
	w.Header().Set("Content-Type", "application/json")
	ours := false // whether the door's own withdrawal closed q
	if q.Open() {
		// The status and the question's id go out now; the body (the
		// decision, or nothing) once the question closes.
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Now().Add(wait + waitSlack))
		w.WriteHeader(http.StatusOK)
		_ = rc.Flush()
		var gone bool
		if q, ours, gone = d.wait(r, agent, q, wait); gone {
			return // the caller went away; the question is withdrawn
		}
	}
	if d.opts.Still != nil {
		if still := d.opts.Still(r); still != nil && !still(r.Context()) {
			d.removed(w, r, p, q, ours)
			return
		}
	}
	covered := func(args json.RawMessage) bool {
		if args == nil {
			return d.svc.EveryCallCovered(in)
		}
		call := in
		call.Arguments = args
		return d.svc.CallCovered(call)
	}
	dec := decide(p, q, ours, covered)
	if dec.Remember != nil && !d.granted(r.Context(), q) {
		// The host keeps a rule askbridge cannot take back: only for a
		// standing approval askbridge holds.
		dec.Remember = nil
	}
	out, err := Output(p, dec)
	if err != nil {
		d.opts.Log.Error().Err(err).Str("path", r.URL.Path).Msg("hook output")
		out = nil // no decision: the host's own prompt
	}
	_, _ = w.Write(out)
}

// removed answers a prompt whose token no longer holds once its wait
// ended. A deny is handed over as the answer's deny: it lets the removed
// token's host run nothing, while withheld it would be no decision, which
// Codex's PreToolUse reads as leaving the call to Codex's own approval
// policy, which may run the call the person denied. Anything else, an
// allow above all, gets what a prompt refused at the door gets
// (FailedAsk): nothing, or "ask" where nothing would let the call run.
func (d *door) removed(w http.ResponseWriter, r *http.Request, p Prompt, q *core.Question, ours bool) {
	if dec := decide(p, q, ours, nil); dec.Verdict == Deny {
		out, err := Output(p, dec)
		if err == nil {
			_, _ = w.Write(out)
			return
		}
		d.opts.Log.Error().Err(err).Str("path", r.URL.Path).Msg("hook output")
	}
	out, _ := FailedAsk(p, core.Errorf(core.CodeForbidden, "hook", "the token this prompt came with no longer holds (a reload removed or changed it)"))
	_, _ = w.Write(out) // nothing, where the host reads nothing as no decision
}

// grantWait bounds how long a prompt's answer waits for the standing
// approval its approve granted to be stored, which core does just after
// the close that woke the door: a grant not stored by then (its write
// failed, or is that slow) hands the host no rule of its own.
const grantWait = 2 * time.Second

// granted reports whether the standing approval q's approve granted is
// stored (core.Service.GrantOf), asking again until grantWait has passed.
func (d *door) granted(ctx context.Context, q *core.Question) bool {
	deadline := time.Now().Add(grantWait)
	for {
		st, err := d.svc.GrantOf(ctx, q)
		if st != nil {
			return true
		}
		if time.Now().After(deadline) {
			if err != nil {
				d.opts.Log.Warn().Err(err).Str("question", string(q.ID)).Msg("hook: the standing approval could not be read; no session rule handed over")
			}
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// dueSlack is how long after the door's wait its question is due. The
// door withdraws it when the wait ends, and its host falls back to its
// own prompt, so that is when its cards are to say it is due ("answer
// by"), not the configured default of a day later. The few seconds after
// (under the minute its cards show the time to) let the door's
// withdrawal, with its own reason, come before the ticker's timeout,
// which is left as the backstop: should the withdrawal fail, the question
// still closes, and takes no answer long after its host stopped
// listening. A policy rule's timeout and the configuration's max only
// shorten it (core.AskInput.HostPrompt).
const dueSlack = 5 * time.Second

// maxAskedAgain bounds how many closed questions of one digest one ask
// walks past. With the chain's newest link kept (chainKey) an ask walks
// one or two; it walks more only when that record is lost (it expired,
// or the store could not be read), from the start of the chain.
const maxAskedAgain = 256

// chainTTL is how long the newest link of a prompt's chain is kept after
// the prompt was last asked anew.
const chainTTL = 7 * 24 * time.Hour

// ask parks the prompt's question under pin, or finds the one this very
// prompt already has. A prompt with the host's tool use id is that call's: a
// question found closed is its answer. A prompt without one is known by
// its digest, which an identical prompt later in the same session shares
// (Claude Code's PermissionRequest names no call): a question of that
// digest found closed answered an earlier prompt, and reading it as this
// one's answer would approve the same command again with nobody asked. So
// the prompt is asked anew, under an id chained to the closed question's,
// which every run of this prompt derives alike and so still shares.
//
// The chain's newest link is kept in the store's values (chainKey), and
// the next ask starts there rather than at the first link: a long
// session's hundredth identical prompt does not walk ninety-nine closed
// questions, and its thousandth is asked like its first. Starting at a
// later link changes no answer: the chain is the same from any of its
// links (each next link is derived from the one before and its closed
// question, which never reopens), so a stale or lost record only means
// a longer walk, and hosts racing on one prompt still meet at one
// question.
func (d *door) ask(ctx context.Context, pin pinned, p Prompt, in core.AskInput) (*core.Question, error) {
	if p.ToolUseID != "" {
		q, _, err := pin.AskOrRepeat(ctx, in)
		return q, err
	}
	kv := d.svc.Values()
	key := chainKey(in)
	switch link, err := kv.Value(ctx, key); {
	case err != nil:
		d.opts.Log.Warn().Err(err).Msg("hook: the prompt's last question could not be read; asking from the first")
	case isLink(link):
		in.ToolCallID = link
	}
	from := in.ToolCallID
	for range maxAskedAgain {
		q, repeat, err := pin.AskOrRepeat(ctx, in)
		if err != nil || !repeat || q.Open() {
			if err == nil && in.ToolCallID != from { // the chain grew: keep its newest link
				if err := kv.SetValueFor(ctx, key, in.ToolCallID, chainTTL); err != nil {
					d.opts.Log.Warn().Err(err).Msg("hook: the prompt's last question could not be kept")
				}
			}
			return q, err
		}
		in.ToolCallID = askedAgain(in.ToolCallID, q.ID)
	}
	return nil, core.Errorf(core.CodeConflict, "hook", "this prompt was asked %d times in this session already; answer it at the host", maxAskedAgain)
}

// chainKey names where the newest link of the chain of in's prompt is
// kept: the agent's, in its run (the host's session), for the prompt's
// digest (in's first tool call id).
func chainKey(in core.AskInput) string {
	sum := sha256.Sum256([]byte(string(in.Agent) + "\x00" + string(in.RunID) + "\x00" + in.ToolCallID))
	return "hooks:chain:" + hex.EncodeToString(sum[:])
}

// isLink reports whether s is a tool call id of a chain (askedAgain).
func isLink(s string) bool {
	h, ok := strings.CutPrefix(s, "hook-")
	if !ok || len(h) != 40 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// wait waits for q to close, for at most wait, and returns it as it then
// stands, withdrawn if still open (nil if it cannot be read). ours
// reports that the door's own withdrawal closed it; gone, that the
// caller went away, its question withdrawn too.
func (d *door) wait(r *http.Request, agent core.AgentID, q *core.Question, wait time.Duration) (_ *core.Question, ours, gone bool) {
	watch, err := d.svc.Watch(q.ID)
	if err == nil {
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		stop := context.AfterFunc(d.opts.Stop, cancel)
		var got *core.Question
		if got, err = watch.Read(ctx); err == nil && got.Open() {
			got, err = watch.Wait(ctx)
		}
		stop()
		cancel()
		watch.Stop()
		if err == nil && got != nil && !got.Open() {
			return got, false, false
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		d.opts.Log.Error().Err(err).Str("question", string(q.ID)).Msg("hook wait")
	}
	if r.Context().Err() != nil {
		d.withdraw(agent, q.ID, ReasonHostStopped)
		return nil, false, true
	}
	reason := reasonGaveUp
	if d.opts.Stop.Err() != nil {
		reason = reasonStopping
	}
	q, ours = d.withdraw(agent, q.ID, reason)
	return q, ours, false
}

// withdraw cancels a hook's question for the agent that asked it, and
// returns it as it then stands: closed by the cancel (ours), or by
// whoever closed it first. The door withdraws it on its own account, not
// at the agent's word, so as askbridge (core.System, recorded as
// core.CloserBridgeCancel), still only the question that agent asked
// (Owner).
func (d *door) withdraw(agent core.AgentID, id core.QuestionID, reason string) (_ *core.Question, ours bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := d.svc.Cancel(ctx, core.CancelInput{QuestionID: id, By: core.System, Owner: agent, Reason: reason})
	if err == nil {
		return o.Question, true
	}
	q, gerr := d.svc.Get(ctx, id)
	if gerr != nil {
		d.opts.Log.Error().Err(err).Str("question", string(id)).Msg("hook withdraw")
		return nil, false
	}
	return q, false
}
