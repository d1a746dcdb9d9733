package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

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

func printOutcome(w io.Writer, out *client.Outcome) {
	q := out.Question
	if !out.Closed && q.Quorum > 1 {
		fmt.Fprintf(w, "recorded your vote on %s (%s); it stays open until %d people agree\n", q.ID, strings.Join(core.TallyOf(&core.Question{Kind: q.Kind, Options: q.Options, Quorum: q.Quorum, Votes: q.Votes}).Lines, "; "), q.Quorum)
		return
	}
	if !out.Closed && len(q.Calls) > 0 {
		fmt.Fprintf(w, "decided %d of %d calls of %s; the batch stays open\n", len(q.Answers), len(q.Calls), q.ID)
		return
	}
	if !out.Closed {
		fmt.Fprintf(w, "recorded %d of %d items of %s; the form stays open\n", len(q.Answers), len(q.Items), q.ID)
		return
	}
	fmt.Fprintf(w, "%s is now %s\n", q.ID, q.State)
}
