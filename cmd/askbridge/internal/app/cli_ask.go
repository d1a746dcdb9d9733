package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

func cmdAsk(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("ask", stderr, "ask --question TEXT --reversibility reversible|hard_to_reverse [flags]")
	var (
		kind      = fs.String("kind", "", "clarification, decision, approval or form (inferred from --option, --tool or --item)")
		text      = fs.String("question", "", "the question (required)")
		context_  = fs.String("context", "", "what the human needs to know to answer")
		rev       = fs.String("reversibility", "", "reversible or hard_to_reverse (required)")
		route     = fs.String("route", "", "the route to post to (default: the default route)")
		run       = fs.String("run", clientEnv(getenv).RunID, "the run id the question belongs to (default: $ASKBRIDGE_RUN_ID or a new one)")
		callID    = fs.String("tool-call-id", "", "the tool call id the answer resumes")
		project   = fs.String("project", "", "project label")
		task      = fs.String("task", "", "task label")
		recommend = fs.String("recommend", "", "decision: the id of the recommended option")
		tool      = fs.String("tool", "", "approval: the gated tool's name")
		argsJSON  = fs.String("args", "", "approval: the tool's arguments as a JSON object")
		timeout   = durationFlag(fs, "timeout", "how long to wait for an answer, such as 30m or 1d12h (default: the server's)")
		onTimeout = fs.String("on-timeout", "", "deny, escalate or reask")
		maxReasks = fs.Int("max-reasks", 0, "reask: how many times")
		noWait    = fs.Bool("no-wait", false, "print the question id and return without waiting")
		asJSON    = fs.Bool("json", false, "print the whole wait response as JSON")
		editable  = fs.String("editable", "", "approval: the argument keys approvers may change, comma-separated, or * for all")
		callback  = fs.String("callback-url", "", "a URL sent the signed wait response when the question closes (within the server's webhooks.allow)")
		idemKey   = fs.String("idempotency-key", "", "asks with the same key (and the same question) park one question: the key an ask that failed printed")
		options   repeated
		items     repeated
		calls     repeated
	)
	fs.Var(&calls, "call", "batch approval: a tool call as 'tool_call_id|tool|arguments JSON' (repeat, 2 to 20); end the id with * to make its arguments editable")
	fs.Var(&options, "option", "decision: an option as 'id|title|trade-offs' (repeat; 2 or more)")
	fs.Var(&items, "item", "form: an item as 'question|option|option*|...' (repeat, 1 to 4; * marks the recommended option)")
	if err := fs.Parse(args); err != nil || !noArgs(fs, stderr) {
		return exitUsage
	}
	if *noWait && *asJSON {
		// Dropped without a word, --json would leave a script that
		// parses JSON with a bare id.
		fmt.Fprintln(stderr, "askbridge ask: --json prints the wait response, and --no-wait waits for none: --no-wait prints the question's id alone, and 'askbridge wait ID --json' its response")
		return exitUsage
	}
	req := client.AskRequest{
		Kind: core.Kind(*kind), Question: *text, Context: *context_, Reversibility: core.Reversibility(*rev),
		Route: *route, RunID: core.RunID(*run), ToolCallID: *callID, Labels: core.Labels{Project: *project, Task: *task},
		Timeout: client.Duration(*timeout), OnTimeout: core.TimeoutPolicy(*onTimeout), MaxReasks: *maxReasks,
		CallbackURL: *callback, IdempotencyKey: *idemKey,
	}
	if req.RunID == "" {
		req.RunID = core.RunID("cli-" + randomHex(6))
	}
	var err error
	if req.Options, err = optionsOf(options, *recommend); err == nil {
		req.Calls, err = callsOf(calls)
	}
	if err != nil {
		fmt.Fprintf(stderr, "askbridge ask: %v\n", err)
		return exitUsage
	}
	req.Items = itemsOf(items)
	if *tool != "" || *argsJSON != "" {
		if err := notJSON(*argsJSON); err != nil && *argsJSON != "" {
			fmt.Fprintf(stderr, "askbridge ask: --args is not JSON: %v\n", err)
			return exitUsage
		}
		req.Tool, req.Arguments = *tool, json.RawMessage(*argsJSON)
	}
	if *editable != "" {
		req.Editable = editableOf(*editable)
	}
	if req.Kind == "" {
		req.Kind = kindOf(req)
	}
	// Checked here as the server checks it, so that an ask it would
	// refuse is a usage error, with nothing sent (the agent's name is the
	// token's, and only the server knows it).
	if err := req.Input("cli").Validate(); err != nil {
		fmt.Fprintf(stderr, "askbridge ask: %s\n", core.ErrorMessage(err))
		return exitUsage
	}
	t, err := clientTarget(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	c := t.client()
	q, err := c.Ask(ctx, req)
	var unknown *client.AskError
	if errors.As(err, &unknown) {
		// The question may be parked: the same ask with its key gets it
		// rather than asking people twice.
		fmt.Fprintf(stderr, "askbridge: the question may have been asked; to get it rather than ask twice, run the same command again with --idempotency-key %s --run %s\n", unknown.Key, req.RunID)
	}
	if err != nil {
		return callFailed(ctx, stderr, err)
	}
	if *noWait {
		if _, err := fmt.Fprintln(stdout, q.ID); err != nil {
			return fail(stderr, fmt.Errorf("asked %s, but could not print its id: %w", q.ID, err))
		}
		return exitAnswered
	}
	fmt.Fprintf(stderr, "asked %s; waiting for an answer (answer with: askbridge answer %s ...)\n", q.ID, q.ID)
	return waitFor(ctx, t, c, q.ID, *asJSON, stdout, stderr)
}

// cmdWait waits on a question asked earlier (by "ask --no-wait", or by an
// MCP call the client gave up on) and prints its resume like ask does.
func cmdWait(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("wait", stderr, "wait ID [--json]")
	asJSONFlag := fs.Bool("json", false, "print the whole wait response as JSON")
	id, ok := parseWithID(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	t, err := clientTarget(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	c := t.client()
	// Read once first, retried as an ask is: a wrong URL or a bridge that
	// is down is said now, not waited on in silence for ever, and a
	// question never seen is not said to stay open.
	if _, err := c.GetRetried(ctx, id); err != nil {
		if _, answered := errors.AsType[*client.Error](err); !answered && ctx.Err() == nil {
			err = fmt.Errorf("askbridge at %s cannot be reached: %w", t.base, err)
		}
		return callFailed(ctx, stderr, err)
	}
	return waitFor(ctx, t, c, id, *asJSONFlag, stdout, stderr)
}

// waitFor waits for question id, which the server has been seen to
// hold, and prints its resume. An outage on the way is said once, and
// its end, so that a wait on a bridge that is down is not silent; it
// is ridden out. Stopped, it says the question stays open.
func waitFor(ctx context.Context, t target, c *client.Client, id core.QuestionID, asJSON bool, stdout, stderr io.Writer) int {
	res, err := c.WaitWith(ctx, id, func(err error) {
		if err != nil {
			fmt.Fprintf(stderr, "askbridge at %s cannot be reached (%v); still waiting on %s\n", t.base, err, id)
		} else {
			fmt.Fprintf(stderr, "askbridge at %s is reached again; waiting on %s\n", t.base, id)
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "stopped waiting; question %s stays open\n", id)
		}
		return callFailed(ctx, stderr, err)
	}
	if err := printResume(stdout, res, asJSON); err != nil {
		// The outcome's code would send a script on with no resume.
		return fail(stderr, fmt.Errorf("%s is %s, but its resume could not be printed ('askbridge wait %s' prints it again): %w", id, res.State, id, err))
	}
	return exitCode(res)
}

// printResume writes res as ask and wait print it; its error is the
// first write's that failed.
func printResume(w io.Writer, res *client.WaitResponse, asJSON bool) error {
	if asJSON {
		return writeJSON(w, res, true)
	}
	if res.Resume == nil {
		return nil
	}
	_, err := fmt.Fprintln(w, res.Resume.Text)
	// A batch: each call's own result, under its id.
	for _, c := range res.Calls {
		if err != nil {
			break
		}
		_, err = fmt.Fprintf(w, "\n== tool call %s\n%s\n", c.ToolCallID, c.Resume.Text)
	}
	return err
}

// editableOf reads --editable: "*" for every key, else a comma list.
func editableOf(s string) *core.Editable {
	if strings.TrimSpace(s) == "*" {
		return &core.Editable{All: true}
	}
	var keys []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return &core.Editable{Keys: keys}
}

// exitCode maps an outcome to the exit code of "askbridge ask" and
// "askbridge wait". An answered batch exits 0 only when every call was
// approved as asked, so "ask ... && make-the-calls" never makes a denied
// one, nor one whose arguments an approver changed (exitApprovedEdited).
func exitCode(res *client.WaitResponse) int {
	switch res.State {
	case core.StateAnswered:
		q := res.Question
		if q != nil && len(q.Calls) > 0 {
			return batchExitCode(q)
		}
		if q != nil && q.Resolution != nil && q.Resolution.Approved != nil && !*q.Resolution.Approved {
			return exitDenied
		}
		if q != nil && q.Resolution != nil && q.Resolution.Edit != nil {
			return exitApprovedEdited
		}
		return exitAnswered
	case core.StateDeclined:
		return exitDeclined
	case core.StateTimedOut:
		return exitTimedOut
	case core.StateExpired:
		return exitExpired
	case core.StateCancelled:
		return exitCancelled
	}
	return exitError
}

// batchExitCode is an answered batch's exit code: 0 when every call was
// approved as asked, exitApprovedEdited when every call was approved and
// some with changed arguments, exitDenied when none was,
// exitPartlyApproved otherwise (a call denied, or one without a
// decision).
func batchExitCode(q *client.AgentQuestion) int {
	approved, edited := 0, false
	for _, c := range q.Calls {
		for _, a := range q.Answers {
			if a.ItemID == c.ToolCallID && a.OptionID == core.ApproveOption {
				approved++
				edited = edited || a.Edited != nil
				break
			}
		}
	}
	switch {
	case approved == len(q.Calls) && edited:
		return exitApprovedEdited
	case approved == len(q.Calls):
		return exitAnswered
	case approved == 0:
		return exitDenied
	}
	return exitPartlyApproved
}

// notJSON says where s stops being one JSON value; nil when it is one.
func notJSON(s string) error {
	var v json.RawMessage
	return json.Unmarshal([]byte(s), &v)
}

// optionsOf reads --option values, "id|title|trade-offs", recommending
// the one whose id is recommend. A recommend with no options would be
// dropped without a word, and the person shown no recommendation.
func optionsOf(specs []string, recommend string) ([]core.Option, error) {
	if recommend != "" && len(specs) == 0 {
		return nil, fmt.Errorf("--recommend names one of a decision's --option ids, and there are none (a form marks its recommended option with * in --item, such as 'Which region?|eu-west-1*|us-east-1')")
	}
	var out []core.Option
	for _, o := range specs {
		parts := strings.SplitN(o, "|", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("--option %q is not 'id|title|trade-offs'", o)
		}
		out = append(out, core.Option{ID: parts[0], Title: parts[1], Writeup: parts[2], Recommended: parts[0] == recommend})
	}
	return out, nil
}

// itemsOf reads --item values, "question|option|option*|...", a * marking
// the recommended option; items and options are numbered q1.., o1.. .
func itemsOf(specs []string) []core.FormItem {
	var out []core.FormItem
	for i, it := range specs {
		parts := strings.Split(it, "|")
		fi := core.FormItem{ID: fmt.Sprintf("q%d", i+1), Question: parts[0]}
		for j, label := range parts[1:] {
			rec := strings.HasSuffix(label, "*")
			fi.Options = append(fi.Options, core.FormOption{ID: fmt.Sprintf("o%d", j+1), Label: strings.TrimSuffix(label, "*"), Recommended: rec})
		}
		out = append(out, fi)
	}
	return out
}

// callsOf reads --call values, "tool_call_id|tool|arguments JSON", an id
// ending in * making that call's arguments editable.
func callsOf(specs []string) ([]core.CallInput, error) {
	var out []core.CallInput
	for _, spec := range specs {
		parts := strings.SplitN(spec, "|", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("--call %q is not 'tool_call_id|tool|arguments JSON'", spec)
		}
		if err := notJSON(parts[2]); err != nil {
			return nil, fmt.Errorf("--call %q: the arguments are not JSON: %v", parts[0], err)
		}
		ci := core.CallInput{ToolCallID: strings.TrimSuffix(parts[0], "*"), Tool: parts[1], Arguments: json.RawMessage(parts[2])}
		if strings.HasSuffix(parts[0], "*") {
			ci.Editable = &core.Editable{All: true}
		}
		out = append(out, ci)
	}
	return out, nil
}

// kindOf is the kind an ask that names none has, from what it carries:
// options make a decision, a tool or calls an approval, items a form.
func kindOf(req client.AskRequest) core.Kind {
	switch {
	case len(req.Options) > 0:
		return core.KindDecision
	case req.Tool != "" || len(req.Arguments) > 0 || len(req.Calls) > 0:
		return core.KindApproval
	case len(req.Items) > 0:
		return core.KindForm
	default:
		return core.KindClarification
	}
}
