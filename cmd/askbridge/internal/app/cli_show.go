package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/fence"
)

// cmdShow prints one question as every surface's card words it (core/card)
// and, under each thing a person may do with it, the command that does
// it. `questions` lists the open ones by their text alone, which is not
// enough to answer from a terminal: a decision's option ids, an approval's
// arguments and their digest, a form's items are here.
func cmdShow(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("show", stderr, "show ID [--json]")
	asJSON := fs.Bool("json", false, "print the question as the API returns it")
	id, ok := parseWithID(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	v, err := c.Get(ctx, id)
	if err != nil {
		return callFailed(ctx, stderr, err)
	}
	if *asJSON {
		if err := writeJSON(stdout, v, true); err != nil {
			return fail(stderr, err)
		}
		return 0
	}
	q := fromOperatorView(v)
	printCard(stdout, q, card.New(q, core.MessageRef{Surface: core.SurfaceAPI, Kind: core.DeliverPost}), time.Now())
	return 0
}

// fromOperatorView is the question an operator's view of it shows, for
// core/card to word.
func fromOperatorView(v *client.Question) *core.Question {
	return &core.Question{ID: v.ID, Kind: v.Kind, Agent: v.Agent, RunID: v.RunID, ToolCallID: v.ToolCallID,
		Labels: v.Labels, Text: v.Text, Context: v.Context, Reversibility: v.Reversibility, Route: v.Route,
		Options: v.Options, Items: v.Items, Call: v.Call, Calls: v.Calls,
		CreatedAt: v.CreatedAt, Deadline: v.Deadline, Timeout: v.Timeout, OnTimeout: v.OnTimeout,
		MaxReasks: v.MaxReasks, Renotified: v.Renotified, Quorum: v.Quorum, Votes: v.Votes,
		State: v.State, Answers: v.Answers, Messages: v.Messages, Resolution: v.Resolution, Rule: v.Rule}
}

// printCard writes c, the card of q, as plain text: the agent's words and
// people's are written through terminalText, so none of them can move the
// terminal's cursor or reverse what follows.
func printCard(w io.Writer, q *core.Question, c card.Card, now time.Time) {
	head := []string{c.Heading}
	for _, m := range c.Markers {
		head = append(head, strings.ToUpper(m.Text()))
	}
	fmt.Fprintf(w, "%s  (%s)\n%s\n\n", strings.Join(head, " · "), q.ID, terminalText(c.Text, ""))
	fmt.Fprintf(w, "Asked by %s %s ago, run %s, route %s", terminalLine(string(c.Meta.Agent)), now.Sub(c.Meta.Asked).Round(time.Second),
		terminalLine(string(c.Meta.RunID)), terminalLine(q.Route))
	if !c.Meta.Deadline.IsZero() {
		// What the deadline will do, as the console words it; whether the
		// route still names an escalation is the server's to know, so a
		// question not yet escalated is taken to escalate as asked.
		fmt.Fprintf(w, "; due %s (then %s)", c.Meta.Deadline.UTC().Format("2006-01-02 15:04 UTC"), card.ThenWords(q, core.AtDeadline(q, true)))
	}
	fmt.Fprintln(w)
	for _, s := range c.Sections {
		fmt.Fprintln(w)
		switch s.Kind {
		case card.SectionContext:
			fmt.Fprintf(w, "Context:\n%s\n", terminalText(s.Body, indent))
			continue
		case card.SectionCall:
			fmt.Fprintf(w, "%sTool %s, with arguments:\n%s\n", numbered(s, c.Progress != nil), terminalLine(s.Title), terminalText(s.Body, indent))
			if sum := digestOf(q, s); sum != "" {
				fmt.Fprintf(w, "%ssha256 %s\n", indent, sum)
			}
		default:
			title := terminalLine(s.Title)
			if s.Recommended {
				title += " (recommended)"
			}
			fmt.Fprintf(w, "%s%s\n", numbered(s, true), title)
			if s.Body != "" {
				fmt.Fprintln(w, terminalText(s.Body, indent))
			}
			if s.Kind == card.SectionItem {
				s.Actions = printChoices(w, q, s)
			}
		}
		if a := s.Answer; a != nil {
			fmt.Fprintf(w, "%sAnswered by %s: %s\n", indent, terminalLine(a.By), terminalLine(a.Text))
		}
		printActions(w, q, s.Actions, s.Kind == card.SectionOption)
	}
	if c.Tally != nil {
		fmt.Fprintln(w)
		for _, l := range c.Tally.Lines {
			fmt.Fprintln(w, terminalLine(l))
		}
	}
	if c.Progress != nil && c.Outcome == nil {
		fmt.Fprintf(w, "\n%s\n", c.Progress.String())
	}
	if o := c.Outcome; o != nil {
		fmt.Fprintf(w, "\n%s\n", terminalLine(o.Line))
		if o.Label != "" {
			fmt.Fprintf(w, "%s:\n%s\n", o.Label, terminalText(o.Choice, indent))
		}
		if o.Reason != "" {
			fmt.Fprintf(w, "Reason:\n%s\n", terminalText(o.Reason, indent))
		}
	}
	if len(c.Actions) > 0 {
		fmt.Fprintln(w)
	}
	for _, a := range c.Actions {
		fmt.Fprintf(w, "%s\n%s%s\n", actionLabel(a), indent, commandFor(q, a.Ref))
	}
}

// actionLabel is a's label as the terminal shows it: a clarification's
// "Reply to answer" names a chat reply, where here the answer is a flag.
func actionLabel(a card.Action) string {
	if a.Label == card.LabelAnswer {
		return "Answer"
	}
	return terminalLine(a.Label)
}

// indent is how far a card's parts are set in under their titles.
const indent = "   "

// digestOf is the whole sha256 of the arguments of call section s, which
// the card cuts to what an eye compares.
func digestOf(q *core.Question, s card.Section) string {
	switch {
	case q.IsBatch() && s.Index >= 0 && s.Index < len(q.Calls):
		return q.Calls[s.Index].ArgumentsSHA256
	case q.Call != nil:
		return q.Call.ArgumentsSHA256
	}
	return s.Hash
}

// numbered is a section's number, for a card that numbers its parts.
func numbered(s card.Section, numbers bool) string {
	if !numbers {
		return ""
	}
	return fmt.Sprintf("%d. ", s.Index+1)
}

// printChoices writes a form item's choices, each with its write-up and,
// while it may be chosen, the command that chooses it; it returns the
// item's actions left to write (its own answer in words).
func printChoices(w io.Writer, q *core.Question, s card.Section) []card.Action {
	var rest []card.Action
	chooses := map[int]card.Action{}
	for _, a := range s.Actions {
		if a.Ref.Action == core.RefOption {
			chooses[a.Ref.Option] = a
		} else {
			rest = append(rest, a)
		}
	}
	for j, ch := range s.Choices {
		line := indent + "- " + terminalLine(ch.Label)
		if ch.Recommended {
			line += " (recommended)"
		}
		fmt.Fprintln(w, line)
		if ch.Description != "" {
			fmt.Fprintln(w, terminalText(ch.Description, indent+"  "))
		}
		if a, ok := chooses[j]; ok {
			fmt.Fprintf(w, "%s  %s\n", indent, commandFor(q, a.Ref))
		}
	}
	return rest
}

// printActions writes each action of a section with the command that
// does it; an option's one action is the option itself, so its command
// alone.
func printActions(w io.Writer, q *core.Question, as []card.Action, bare bool) {
	for _, a := range as {
		if bare && len(as) == 1 {
			fmt.Fprintf(w, "%s%s\n", indent, commandFor(q, a.Ref))
			continue
		}
		label := strings.TrimPrefix(actionLabel(a), fmt.Sprintf("%d. ", a.Ref.Item+1)) // under its numbered part
		fmt.Fprintf(w, "%s%s:\n%s  %s\n", indent, label, indent, commandFor(q, a.Ref))
	}
}

// commandFor is the askbridge command that does what the button of ref
// does, as cmdAnswer and cmdDecline take it, after a "$ "; or, for one
// the CLI has no flag for (one call of a batch edited, or approved with a
// standing approval), where it can be done.
func commandFor(q *core.Question, r core.Ref) string {
	id := string(q.ID)
	answer := "$ askbridge answer " + id + " "
	batch := q.IsBatch() && r.Item >= 0 && r.Item < len(q.Calls)
	form := q.Kind == core.KindForm && r.Item >= 0 && r.Item < len(q.Items)
	switch r.Action {
	case core.RefDecline:
		return "$ askbridge decline " + id
	case core.RefOption:
		switch {
		case form && r.Option < len(q.Items[r.Item].Options):
			return answer + "--item " + shellWord(q.Items[r.Item].ID+"="+q.Items[r.Item].Options[r.Option].ID)
		case r.Option < len(q.Options):
			return answer + "--option " + shellWord(q.Options[r.Option].ID) + " [--text NOTE]"
		}
	case core.RefText:
		if form {
			return answer + "--item-text " + shellWord(q.Items[r.Item].ID+"=") + "TEXT"
		}
		return answer + "--text TEXT"
	case core.RefApprove, core.RefDeny:
		verdict := core.ApproveOption
		if r.Action == core.RefDeny {
			verdict = core.DenyOption
		}
		if batch {
			return answer + "--call " + shellWord(q.Calls[r.Item].ToolCallID+"="+verdict) + " [--text REASON]"
		}
		return answer + "--option " + verdict + " [--text REASON]"
	case core.RefEdit:
		if batch {
			break
		}
		return answer + "--option " + core.ApproveOption + " --args 'JSON'"
	case core.RefStanding:
		if batch {
			break
		}
		scope := core.StandingRun
		if r.Option == 1 {
			scope = core.StandingAgent
		}
		return answer + "--option " + core.ApproveOption + " --standing " + string(scope)
	}
	return "(not from the CLI: from the console or a chat card)"
}

// shellWord is s as one word for a POSIX shell: as it is when it is made
// of characters no shell reads specially, else single-quoted. A control
// character (in an id stored before asks refused them) is escaped, as
// everywhere else on the terminal: such a command reads, but cannot be
// pasted as it is.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.=/:@") == "" {
		return s
	}
	return "'" + escapeControls(strings.ReplaceAll(s, "'", `'\''`)) + "'"
}

// terminalLine is s on one line, its runs of spaces and line breaks one
// space, with its control characters escaped as terminalText does; whole,
// where oneLine cuts a table's cell.
func terminalLine(s string) string { return escapeControls(strings.Join(strings.Fields(s), " ")) }

// terminalText is s, its lines kept and each begun with indent, every
// control character but the newline escaped as oneLine does.
func terminalText(s, indent string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = indent + escapeControls(l)
	}
	return strings.Join(lines, "\n")
}

// escapeControls writes each control character and bidi control of s
// (core.IsTextControl) as its \u escape, keeping s's spacing.
func escapeControls(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(terminalRune(r))
	}
	return b.String()
}

// writeJSON writes v to w as one JSON value and a line feed, indented or
// not, with every character a terminal would obey or show as nothing
// escaped (terminalJSON): --json output is read by scripts, but also by
// an operator at a terminal, and it holds an agent's arguments and
// people's words, which may carry such characters.
func writeJSON(w io.Writer, v any, indent bool) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(terminalJSON(b.Bytes()))
	return err
}

// terminalJSON is js, valid JSON, with each rune from U+007F on that is a
// control, a bidi control or invisible (core.IsTextControl,
// fence.IsInvisible) written as its \u escape; beyond U+FFFF, as its
// UTF-16 pair. encoding/json escapes only the C0 controls (and U+2028,
// U+2029), so a C1 control such as U+009B, a terminal's CSI, or U+202E,
// which reverses what follows, went out as it was. Outside its strings
// JSON is ASCII, so every such rune is in a string, where the escape
// reads back as the same character: a script decodes the same values.
func terminalJSON(js []byte) []byte {
	hidden := func(r rune) bool { return r >= 0x7f && (core.IsTextControl(r) || fence.IsInvisible(r)) }
	if !bytes.ContainsFunc(js, hidden) {
		return js
	}
	out := make([]byte, 0, len(js)+64)
	for _, r := range string(js) {
		switch {
		case !hidden(r):
			out = utf8.AppendRune(out, r)
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out
}

// terminalRune is r as the CLI writes it to a terminal: a control
// character or bidi control (core.IsTextControl) but the tab as its \u
// escape, so no text can move the cursor or reverse what follows; any
// other rune as it is.
func terminalRune(r rune) string {
	if core.IsTextControl(r) && r != '\t' {
		return fmt.Sprintf(`\u%04x`, r)
	}
	return string(r)
}
