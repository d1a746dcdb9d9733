package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
)

func cmdQuestions(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("questions", stderr, "questions [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil || !noArgs(fs, stderr) {
		return exitUsage
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	all := []*client.Question{} // none open is [] in --json, not null
	cursor := ""
	for {
		page, err := c.List(ctx, cursor, 100)
		if err != nil {
			return callFailed(ctx, stderr, err)
		}
		all = append(all, page.Questions...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if *asJSON {
		if err := writeJSON(stdout, all, true); err != nil {
			return fail(stderr, err)
		}
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
			time.Since(q.CreatedAt).Round(time.Second), oneLine(string(q.Agent), 20), oneLine(q.Text, 60))
	}
	tw.Flush()
	return 0
}

// oneLine keeps a table cell on one line and within n runes, with each
// control character and bidi control written as its \u escape
// (terminalRune). Asks refuse them now, but questions asked before may hold
// them: printed as they are, an agent's ESC could erase or rewrite rows
// of the operator's terminal, and U+202E reverse the text after it. An
// escape is cut whole or not at all.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	pieces := make([]string, 0, len(s))
	width := 0
	for _, r := range s {
		p := terminalRune(r) // no tab is left after Fields
		pieces = append(pieces, p)
		width += utf8.RuneCountInString(p)
	}
	if width <= n {
		return strings.Join(pieces, "")
	}
	var b strings.Builder
	width = 0
	for _, p := range pieces {
		w := utf8.RuneCountInString(p)
		if width+w > n-1 {
			break
		}
		b.WriteString(p)
		width += w
	}
	return b.String() + "…"
}

func cmdEvents(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("events", stderr, "events [--since SEQ] [--follow]")
	since := fs.Int64("since", 0, "print events after this sequence number")
	follow := fs.Bool("follow", false, "keep printing new events until interrupted")
	if err := fs.Parse(args); err != nil || !noArgs(fs, stderr) {
		return exitUsage
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	print := func(e client.Event) error { return writeJSON(stdout, e, false) }
	if *follow {
		err = c.Follow(ctx, *since, print)
		if ctx.Err() != nil {
			return 0 // interrupted: the normal end of --follow
		}
		return callFailed(ctx, stderr, err)
	}
	evs, err := c.Events(ctx, *since)
	if err != nil {
		return callFailed(ctx, stderr, err)
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
	if err := fs.Parse(args); err != nil || !noArgs(fs, stderr) {
		return exitUsage
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	dir, err := c.People(ctx)
	if err != nil {
		return callFailed(ctx, stderr, err)
	}
	if *asJSON {
		if err := writeJSON(stdout, dir, false); err != nil {
			return fail(stderr, err)
		}
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
