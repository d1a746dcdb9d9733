package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/mattn/go-isatty"
)

func cmdAnswer(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("answer", stderr, "answer ID (--text TEXT | --option ID [--args JSON] [--standing run|agent] | --item ITEM=OPTION ... | --item-text ITEM=TEXT ... | --call ID=approve|deny ...) [--yes]")
	text := fs.String("text", "", "the answer; for a decision or approval, an optional note or reason")
	option := fs.String("option", "", "the chosen option id; approve or deny for an approval")
	argsJSON := fs.String("args", "", "approval: approve with these edited arguments (a JSON object)")
	standing := fs.String("standing", "", "approval: also grant a standing approval, for the rest of the 'run' or for the 'agent'")
	yes := fs.Bool("yes", false, "record a choice on a hard-to-reverse question without showing it back to confirm (at a terminal, it is shown back and recorded only on yes)")
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
		if err := notJSON(*argsJSON); err != nil {
			fmt.Fprintf(stderr, "askbridge answer: --args is not JSON: %v\n", err)
			return exitUsage
		}
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
	if !*yes && stdinTerminal(stdin) {
		ok, err := confirmed(ctx, c, id, req, stdin, stderr)
		if err != nil {
			return callFailed(ctx, stderr, err)
		}
		if !ok {
			fmt.Fprintln(stderr, "askbridge answer: not confirmed; nothing was recorded")
			return exitError
		}
	}
	out, err := c.Answer(ctx, id, req)
	if err != nil {
		return callFailed(ctx, stderr, err)
	}
	return printedOutcome(stdout, stderr, out)
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
		return callFailed(ctx, stderr, err)
	}
	return printedOutcome(stdout, stderr, out)
}

// printedOutcome prints out (printOutcome) and returns the command's
// exit code: 0, or 1 when stdout could not take it, saying that what was
// sent is recorded all the same, so that it is not taken as lost.
func printedOutcome(stdout, stderr io.Writer, out *client.Outcome) int {
	if err := printOutcome(stdout, out); err != nil {
		return fail(stderr, fmt.Errorf("%s: recorded, but what was recorded could not be printed ('askbridge show %s' says it): %w", out.Question.ID, out.Question.ID, err))
	}
	return 0
}

// printOutcome says what answer or decline recorded. A vote's tally
// names the voters so far by the display names they chose, and a
// decision's options by the agent's titles: each line goes through
// terminalLine, as show writes them. Its error is the write's.
func printOutcome(w io.Writer, out *client.Outcome) error {
	q := out.Question
	var err error
	switch {
	case !out.Closed && q.Quorum > 1:
		lines := core.TallyOf(&core.Question{Kind: q.Kind, Options: q.Options, Quorum: q.Quorum, Votes: q.Votes, Counted: q.Counted}).Lines
		for i, l := range lines {
			lines[i] = terminalLine(l)
		}
		_, err = fmt.Fprintf(w, "recorded your vote on %s (%s); it stays open until %d people agree\n", q.ID, strings.Join(lines, "; "), q.Quorum)
	case !out.Closed && len(q.Calls) > 0:
		_, err = fmt.Fprintf(w, "decided %d of %d calls of %s; the batch stays open\n", len(q.Answers), len(q.Calls), q.ID)
	case !out.Closed:
		_, err = fmt.Fprintf(w, "recorded %d of %d items of %s; the form stays open\n", len(q.Answers), len(q.Items), q.ID)
	default:
		_, err = fmt.Fprintf(w, "%s is now %s\n", q.ID, q.State)
	}
	return err
}

// stdinTerminal reports whether r, answer's stdin, is a person's
// terminal, where a hard-to-reverse choice is shown back to confirm; a
// script's stdin (a pipe, a file, nothing) is not.
var stdinTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// confirmQuestion ends the confirmation; only y or yes records.
const confirmQuestion = "Record this? Type yes to record it; anything else records nothing: "

// confirmed shows req back to the person at the terminal before it is
// recorded, when it is a choice on an open hard-to-reverse question
// (card.NeedsConfirm), as the console does, and reports whether they typed
// yes; any other answer needs no confirmation. The question is shown as
// it is now, whole: answer is typed from the questions list, which
// shows no arguments, or from memory of a show. A closed question is
// not shown back: the server says who closed it. Ctrl-C at the prompt
// records nothing.
func confirmed(ctx context.Context, c *client.Client, id core.QuestionID, req client.AnswerRequest, stdin io.Reader, stderr io.Writer) (bool, error) {
	v, err := c.Get(ctx, id)
	if err != nil {
		return false, err
	}
	q := fromOperatorView(v)
	if !q.Open() || !card.NeedsConfirm(q, core.AnswerInput{OptionID: req.ChosenOptionID, Items: req.Items, Arguments: req.Arguments, Standing: req.Standing, Calls: req.Calls}) {
		return true, nil
	}
	fmt.Fprintf(stderr, "%s is hard to reverse. This will be recorded:\n", id)
	for _, l := range confirmLines(q, req) {
		fmt.Fprintf(stderr, "%s:\n%s\n", terminalLine(l[0]), terminalText(l[1], indent))
	}
	fmt.Fprint(stderr, confirmQuestion)
	reply := make(chan string, 1)
	go func() {
		// One line, bounded; a reply still unread when ctx ends is
		// dropped with the process.
		line, _ := bufio.NewReader(io.LimitReader(stdin, 1024)).ReadString('\n')
		reply <- line
	}()
	select {
	case line := <-reply:
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		}
		if !strings.HasSuffix(line, "\n") {
			fmt.Fprintln(stderr) // stdin closed (Ctrl-D) mid-line
		}
		return false, nil
	case <-ctx.Done():
		fmt.Fprintln(stderr)
		return false, nil
	}
}

// confirmLines are what req will record on q, as label and text: the
// question, then the option and the write-up the agent resumes with, the
// form's answers, or each call approved with its arguments whole and
// their sha256 (the arguments an approver typed, when edited).
func confirmLines(q *core.Question, req client.AnswerRequest) [][2]string {
	out := [][2]string{{"Question", q.Text}}
	add := func(label, text string) {
		if text != "" {
			out = append(out, [2]string{label, text})
		}
	}
	call := func(tc core.ToolCall) {
		add("Tool", tc.Tool)
		add("Arguments (sha256 "+tc.ArgumentsSHA256+")", core.PrettyJSON(tc.Arguments))
	}
	switch q.Kind {
	case core.KindDecision:
		if o, ok := q.Option(req.ChosenOptionID); ok {
			add("Option", o.Title+" ("+o.ID+")")
			add("Write-up sent to the agent", o.Writeup)
		} else {
			add("Option", req.ChosenOptionID)
		}
	case core.KindForm:
		for _, it := range req.Items {
			item, _ := q.Item(it.ItemID)
			label := item.Question
			if label == "" {
				label = it.ItemID
			}
			add(label, item.Shown(it.OptionID, it.Text))
		}
	case core.KindApproval:
		for _, bc := range q.Calls {
			verdict, reason := "", ""
			for _, d := range req.Calls {
				if d.ToolCallID == bc.ToolCallID {
					verdict, reason = d.OptionID, d.Reason
				}
			}
			if _, decided := q.Answered(bc.ToolCallID); verdict == "" && len(req.Calls) == 0 && !decided {
				verdict = req.ChosenOptionID // approve-all: every call still undecided
			}
			if verdict != "" {
				add("Call "+bc.ToolCallID, verdict)
				call(bc.ToolCall)
				add("Reason", reason) // --call with --text: the reason goes on each call
			}
		}
		if q.Call != nil {
			call(*q.Call)
			add("Verdict", req.ChosenOptionID)
			if req.Arguments != nil {
				add("Approved arguments, in place of those asked", core.PrettyJSON(req.Arguments))
			}
			if req.Standing != nil {
				add("Standing approval", "later asks for "+q.Call.Tool+" by this agent are approved at once ("+string(req.Standing.Scope)+")")
			}
		}
	}
	label := "Note"
	if q.Kind == core.KindApproval {
		label = "Reason"
	}
	add(label, req.Answer)
	return out
}
