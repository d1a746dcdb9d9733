package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

type command func(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int

// cliCommands are the commands that talk to a running server.
var cliCommands = map[string]command{
	"ask":       cmdAsk,
	"questions": cmdQuestions,
	"answer":    cmdAnswer,
	"decline":   cmdDecline,
	"wait":      cmdWait,
	"events":    cmdEvents,
	"people":    cmdPeople,
	"mcp":       cmdMCP,
}

// Exit codes of "askbridge ask": a script can branch on the outcome without
// parsing text.
const (
	exitAnswered  = 0
	exitError     = 1
	exitUsage     = 2
	exitDeclined  = 3
	exitTimedOut  = 4
	exitExpired   = 5
	exitCancelled = 6
	exitDenied    = 7 // an approval that was answered with deny
)

// newClient reaches the server named by ASKBRIDGE_URL with ASKBRIDGE_TOKEN.
// With neither set it reaches the local server (ASKBRIDGE_ADDR) with the
// admin token from the local data directory, so the README's loop needs no
// set-up.
func newClient(getenv func(string) string) (*client.Client, error) {
	s, err := readEnv(getenv)
	if err != nil {
		return nil, err
	}
	url, token := serverURL(s), s.Client.Token.Reveal()
	if token == "" {
		path := filepath.Join(s.DataDir, "admin.token")
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("no ASKBRIDGE_TOKEN, and no local admin token (%v): start the server with 'askbridge serve' or set ASKBRIDGE_URL and ASKBRIDGE_TOKEN", err)
		}
		token = strings.TrimSpace(string(b))
	}
	return client.New(url, token), nil
}

// serverURL is the server the CLI talks to: ASKBRIDGE_URL, or the local
// server's address.
func serverURL(s Settings) string {
	if s.Client.URL != "" {
		return s.Client.URL
	}
	return "http://" + s.Addr
}

// clientEnv is the CLI's own settings; they are plain strings, which
// cannot fail to read.
func clientEnv(getenv func(string) string) ClientSettings {
	s, _ := readEnv(getenv)
	return s.Client
}

// repeated collects a repeatable flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ", ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func newFlags(name string, stderr io.Writer, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: askbridge %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// fail prints an error the way every command does and returns exitError.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "askbridge:", err)
	return exitError
}

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
		timeout   = fs.Duration("timeout", 0, "how long to wait for an answer (default: the server's)")
		onTimeout = fs.String("on-timeout", "", "deny, escalate or reask")
		maxReasks = fs.Int("max-reasks", 0, "reask: how many times")
		noWait    = fs.Bool("no-wait", false, "print the question id and return without waiting")
		asJSON    = fs.Bool("json", false, "print the whole wait response as JSON")
		editable  = fs.String("editable", "", "approval: the argument keys approvers may change, comma-separated, or * for all")
		options   repeated
		items     repeated
		calls     repeated
	)
	fs.Var(&calls, "call", "batch approval: a tool call as 'tool_call_id|tool|arguments JSON' (repeat, 2 to 20); end the id with * to make its arguments editable")
	fs.Var(&options, "option", "decision: an option as 'id|title|trade-offs' (repeat; 2 or more)")
	fs.Var(&items, "item", "form: an item as 'question|option|option*|...' (repeat, 1 to 4; * marks the recommended option)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "askbridge ask: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	req := client.AskRequest{
		Kind: core.Kind(*kind), Question: *text, Context: *context_, Reversibility: core.Reversibility(*rev),
		Route: *route, RunID: *run, ToolCallID: *callID, Labels: core.Labels{Project: *project, Task: *task},
		Timeout: client.Duration(*timeout), OnTimeout: core.TimeoutPolicy(*onTimeout), MaxReasks: *maxReasks,
	}
	if req.RunID == "" {
		req.RunID = "cli-" + randomHex(6)
	}
	for _, o := range options {
		parts := strings.SplitN(o, "|", 3)
		if len(parts) != 3 {
			fmt.Fprintf(stderr, "askbridge ask: --option %q is not 'id|title|trade-offs'\n", o)
			return exitUsage
		}
		req.Options = append(req.Options, core.Option{ID: parts[0], Title: parts[1], Writeup: parts[2], Recommended: parts[0] == *recommend})
	}
	for i, it := range items {
		parts := strings.Split(it, "|")
		fi := core.FormItem{ID: fmt.Sprintf("q%d", i+1), Question: parts[0]}
		for j, label := range parts[1:] {
			rec := strings.HasSuffix(label, "*")
			fi.Options = append(fi.Options, core.FormOption{ID: fmt.Sprintf("o%d", j+1), Label: strings.TrimSuffix(label, "*"), Recommended: rec})
		}
		req.Items = append(req.Items, fi)
	}
	if *tool != "" || *argsJSON != "" {
		req.Tool, req.Arguments = *tool, json.RawMessage(*argsJSON)
	}
	if *editable != "" {
		req.Editable = editableOf(*editable)
	}
	for _, spec := range calls {
		parts := strings.SplitN(spec, "|", 3)
		if len(parts) != 3 {
			fmt.Fprintf(stderr, "askbridge ask: --call %q is not 'tool_call_id|tool|arguments JSON'\n", spec)
			return exitUsage
		}
		ci := core.CallInput{ToolCallID: strings.TrimSuffix(parts[0], "*"), Tool: parts[1], Arguments: json.RawMessage(parts[2])}
		if strings.HasSuffix(parts[0], "*") {
			ci.Editable = &core.Editable{All: true}
		}
		req.Calls = append(req.Calls, ci)
	}
	if req.Kind == "" {
		switch {
		case len(req.Options) > 0:
			req.Kind = core.KindDecision
		case req.Tool != "" || len(req.Arguments) > 0 || len(req.Calls) > 0:
			req.Kind = core.KindApproval
		case len(req.Items) > 0:
			req.Kind = core.KindForm
		default:
			req.Kind = core.KindClarification
		}
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	q, err := c.Ask(ctx, req)
	if err != nil {
		return fail(stderr, err)
	}
	if *noWait {
		fmt.Fprintln(stdout, q.ID)
		return exitAnswered
	}
	fmt.Fprintf(stderr, "asked %s; waiting for an answer (answer with: askbridge answer %s ...)\n", q.ID, q.ID)
	res, err := c.Wait(ctx, q.ID)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "stopped waiting; question %s stays open\n", q.ID)
		}
		return fail(stderr, err)
	}
	printResume(stdout, res, *asJSON)
	return exitCode(res)
}

// cmdWait waits on a question asked earlier (by "ask --no-wait", or by an
// MCP call the client gave up on) and prints its resume like ask does.
func cmdWait(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("wait", stderr, "wait ID [--json]")
	asJSON := fs.Bool("json", false, "print the whole wait response as JSON")
	id, ok := parseWithID(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	res, err := c.Wait(ctx, id)
	if err != nil {
		return fail(stderr, err)
	}
	printResume(stdout, res, *asJSON)
	return exitCode(res)
}

func printResume(w io.Writer, res *client.WaitResponse, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else if res.Resume != nil {
		fmt.Fprintln(w, res.Resume.Text)
		// A batch: each call's own result, under its id.
		for _, c := range res.Calls {
			fmt.Fprintf(w, "\n== tool call %s\n%s\n", c.ToolCallID, c.Resume.Text)
		}
	}
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

// exitCode maps an outcome to the exit code of "askbridge ask".
func exitCode(res *client.WaitResponse) int {
	switch res.State {
	case core.StateAnswered:
		if r := res.Question.Resolution; r != nil && r.Approved != nil && !*r.Approved {
			return exitDenied
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

func cmdQuestions(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("questions", stderr, "questions [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	var all []*client.Question
	cursor := ""
	for {
		page, err := c.List(ctx, cursor, 100)
		if err != nil {
			return fail(stderr, err)
		}
		all = append(all, page.Questions...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(all)
		return 0
	}
	if len(all) == 0 {
		fmt.Fprintln(stdout, "no open questions")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tREVERSIBILITY\tAGE\tAGENT\tQUESTION")
	for _, q := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", q.ID, q.Kind, q.Reversibility,
			time.Since(q.CreatedAt).Round(time.Second), oneLine(q.Agent, 20), oneLine(q.Text, 60))
	}
	tw.Flush()
	return 0
}

// oneLine keeps a table cell on one line and within n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func cmdAnswer(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("answer", stderr, "answer ID (--text TEXT | --option ID [--args JSON] [--standing run|agent] | --item ITEM=OPTION ... | --item-text ITEM=TEXT ... | --call ID=approve|deny ...)")
	text := fs.String("text", "", "the answer; for a decision or approval, an optional note or reason")
	option := fs.String("option", "", "the chosen option id; approve or deny for an approval")
	argsJSON := fs.String("args", "", "approval: approve with these edited arguments (a JSON object)")
	standing := fs.String("standing", "", "approval: also grant a standing approval, for the rest of the 'run' or for the 'agent'")
	var items, itemTexts, calls repeated
	fs.Var(&items, "item", "form: ITEM=OPTION (repeat)")
	fs.Var(&itemTexts, "item-text", "form: ITEM=free text (repeat)")
	fs.Var(&calls, "call", "batch: TOOL_CALL_ID=approve or TOOL_CALL_ID=deny (repeat); --option alone decides every call still undecided")
	id, ok := parseWithID(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	req := client.AnswerRequest{Answer: *text, ChosenOptionID: *option}
	if *argsJSON != "" {
		req.Arguments = json.RawMessage(*argsJSON)
	}
	if *standing != "" {
		req.Standing = &core.StandingRequest{Scope: core.StandingScope(*standing)}
	}
	for _, kv := range calls {
		k, v, found := strings.Cut(kv, "=")
		if !found {
			fmt.Fprintf(stderr, "askbridge answer: --call %q is not TOOL_CALL_ID=approve|deny\n", kv)
			return exitUsage
		}
		req.Calls = append(req.Calls, core.CallDecision{ToolCallID: k, OptionID: v, Reason: *text})
	}
	if len(calls) > 0 {
		req.Answer = ""
	}
	for _, spec := range [][2]any{{items, false}, {itemTexts, true}} {
		for _, kv := range spec[0].(repeated) {
			k, v, found := strings.Cut(kv, "=")
			if !found {
				fmt.Fprintf(stderr, "askbridge answer: %q is not ITEM=VALUE\n", kv)
				return exitUsage
			}
			if spec[1].(bool) {
				req.Items = append(req.Items, client.ItemAnswer{ItemID: k, Text: v})
			} else {
				req.Items = append(req.Items, client.ItemAnswer{ItemID: k, OptionID: v})
			}
		}
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	out, err := c.Answer(ctx, id, req)
	if err != nil {
		return fail(stderr, err)
	}
	printOutcome(stdout, out)
	return 0
}

func cmdDecline(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("decline", stderr, "decline ID")
	id, ok := parseWithID(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	out, err := c.Decline(ctx, id)
	if err != nil {
		return fail(stderr, err)
	}
	printOutcome(stdout, out)
	return 0
}

// parseWithID parses "ID [flags]" or "[flags] ID".
func parseWithID(fs *flag.FlagSet, args []string, stderr io.Writer) (string, bool) {
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return "", false
	}
	if id == "" && fs.NArg() == 1 {
		id = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "askbridge %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return "", false
	}
	if id == "" {
		fs.Usage()
		return "", false
	}
	return id, true
}

func printOutcome(w io.Writer, out *client.Outcome) {
	q := out.Question
	if !out.Closed && q.Quorum > 1 {
		fmt.Fprintf(w, "recorded your vote on %s (%s); it stays open until %d people agree\n", q.ID, strings.Join(core.TallyOf(q).Lines, "; "), q.Quorum)
		return
	}
	if !out.Closed {
		fmt.Fprintf(w, "recorded %d of %d items of %s; the form stays open\n", len(q.Answers), len(q.Items), q.ID)
		return
	}
	fmt.Fprintf(w, "%s is now %s\n", q.ID, q.State)
}

func cmdEvents(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("events", stderr, "events [--since SEQ] [--follow]")
	since := fs.Int64("since", 0, "print events after this sequence number")
	follow := fs.Bool("follow", false, "keep printing new events until interrupted")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	enc := json.NewEncoder(stdout)
	print := func(e client.Event) error { return enc.Encode(e) }
	if *follow {
		err = c.Follow(ctx, *since, print)
		if ctx.Err() != nil {
			return 0 // interrupted: the normal end of --follow
		}
		return fail(stderr, err)
	}
	evs, err := c.Events(ctx, *since)
	if err != nil {
		return fail(stderr, err)
	}
	for _, e := range evs {
		print(e)
	}
	return 0
}

// cmdPeople prints the configured people and groups: one line per person
// (name, display name, surfaces, groups, whether they get DMs), then one
// per group; --json prints the directory as the API returns it.
func cmdPeople(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("people", stderr, "people [--json]")
	asJSON := fs.Bool("json", false, "print the directory as JSON")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	dir, err := c.People(ctx)
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		json.NewEncoder(stdout).Encode(dir)
		return 0
	}
	if len(dir.People) == 0 {
		fmt.Fprintln(stdout, "no people are configured")
		return 0
	}
	for _, p := range dir.People {
		surfaces := make([]string, len(p.Surfaces))
		for i, sf := range p.Surfaces {
			surfaces[i] = string(sf)
		}
		line := fmt.Sprintf("%-16s %-24s %s", p.Name, oneLine(p.DisplayName, 24), strings.Join(surfaces, ","))
		if len(p.Groups) > 0 {
			line += "  groups: " + strings.Join(p.Groups, ",")
		}
		if p.DM {
			line += "  dm"
		}
		fmt.Fprintln(stdout, line)
	}
	for _, g := range dir.Groups {
		fmt.Fprintf(stdout, "group %s: %s\n", g.Name, strings.Join(g.Members, ", "))
	}
	return 0
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
