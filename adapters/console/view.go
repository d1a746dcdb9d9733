package console

import (
	"errors"
	"fmt"
	"html/template"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// timeFormat is how every page writes a time: one zone for everyone.
const timeFormat = "2006-01-02 15:04 UTC"

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(timeFormat)
	},
	"iso":        iso,
	"list":       func(s ...string) []string { return s },
	"approveAll": func() string { return card.LabelApproveAll },
	"denyAll":    func() string { return card.LabelDenyAll },
	// An agent's option is labelled where it is a control as on every
	// card (quoted where it reads as askbridge's own, on one line), and
	// the console's own controls in the words it is told apart from.
	"agentLabel":    card.AgentLabel,
	"declineLabel":  card.ConsoleDeclineLabel,
	"withdrawLabel": func() string { return card.LabelConsoleWithdraw },
	"inc":           func(i int) int { return i + 1 },
	"firstLine":     firstLine,
	"isolable":      isolable,
}

// isolable is a person's text made fit to draw in a <bdi> of its own:
// without any U+2069 POP DIRECTIONAL ISOLATE that closes no isolate the
// text itself opened. Browsers isolate a <bdi> by those same controls, so
// such a PDI would close the <bdi>'s isolation from within and let an
// override after it (U+202E) reorder the server's words that follow
// ("answered by ..."). Inside a true isolate it would do nothing, so
// nothing shown changes. core refuses all of these in an agent's text.
func isolable(s string) string {
	if !strings.ContainsRune(s, '\u2069') {
		return s
	}
	var b strings.Builder
	open := 0
	for _, r := range s {
		switch r {
		case '\u2066', '\u2067', '\u2068': // LRI, RLI, FSI
			open++
		case '\u2069':
			if open == 0 {
				continue
			}
			open--
		}
		b.WriteRune(r)
	}
	return b.String()
}

// line is a line of the server's own words that may name people (core's
// outcome line, a refusal, who decided), drawn by the template "line":
// each name in a <bdi> of its own, so that nothing in a name can reorder
// the server's words after it, as the lines whose names stand apart in
// a template are drawn.
type line []piece

// piece is a run of a line: a person's name, or the server's words.
type piece struct {
	Text string
	Name bool
}

// namedLine is s with every place where one of names stands in it a
// piece of its own. A name that is also a run of the server's words is
// isolated there too, which changes nothing shown.
func namedLine(s string, names []string) line {
	var out line
	for s != "" {
		at, name := -1, ""
		for _, n := range names {
			i := strings.Index(s, n)
			if n != "" && i >= 0 && (at < 0 || i < at || i == at && len(n) > len(name)) {
				at, name = i, n
			}
		}
		if at < 0 {
			return append(out, piece{Text: s})
		}
		if at > 0 {
			out = append(out, piece{Text: s[:at]})
		}
		out = append(out, piece{Text: name, Name: true})
		s = s[at+len(name):]
	}
	return out
}

// namesOf are the names of people that core's lines about q may hold
// (card.OutcomeLine, card.RefusalNote): whoever closed it, voted on it,
// decided a part of it, or granted the standing approval that did, each
// as those lines name people (card.PersonName).
func namesOf(q *core.Question) []string {
	var out []string
	add := func(d core.Decider) {
		if n := card.PersonName(d); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	granted := func(u *core.StandingUse) {
		if u != nil {
			add(u.GrantedBy)
		}
	}
	if r := q.Resolution; r != nil {
		add(r.Decider)
		granted(r.Standing)
	}
	for _, v := range q.Votes {
		add(v.Decider)
	}
	for _, a := range q.Answers {
		add(a.Decider)
		granted(a.Standing)
	}
	return out
}

// viewer is who a page is rendered for, and the token its forms post
// (masked, csrf.go).
type viewer struct {
	Account Account
	CSRF    string
}

func (v viewer) decider() core.Decider { return decider(v.Account) }

// cardView is one question as a card shows it. Controls are present only
// when the viewer may answer it (role and route) and it is open;
// CanCancel (withdraw) by the role alone, on any open question. The
// server checks again on every post.
type cardView struct {
	Q       *core.Question
	Rank    string
	Heading string
	Hard    bool
	// AtAsk is a question closed as it was asked (core.DecidedAtAsk),
	// which the open inbox leaves out even if it drew it open a moment
	// before its close (console.js).
	AtAsk   bool
	Age     string
	Rooms   []string
	Outcome line
	Choice  string
	Reason  string
	Options []core.Option
	Items   []itemView
	// Call is a single approval's tool call; Calls a batch's, with
	// Progress ("Answered 2/5") while some are decided.
	Call       *callView
	Calls      []callView
	Progress   string
	Controls   bool
	CanCancel  bool
	NotDecider string
	CSRF       string
	// Src is where the page fetches this row again when it changes;
	// "" where nothing does (a result page, or a question's page, which
	// fetches its whole part).
	Src string

	// What an inbox row shows folded: the question's first line (open or
	// closed), and while open when it is due (a card's deadline says so
	// too) and how far a quorum, a batch or a form has got.
	FirstLine, Due string
	// Then is what the question's next deadline does, in words
	// (thenAt), which its deadline line says after "then".
	Then  string
	Tally []string
	// Votes is an open question's quorum tally in core's words, its
	// voters named as cards name them (card.TallyOf), which its card
	// shows; Tally starts with it.
	Votes []string
	// ReadOnly is an observer's open card: no controls, and it says so.
	ReadOnly bool
	// Voted is the viewer's own vote on a question that needs several
	// people: shown where the vote buttons were, which it replaces.
	Voted *votedView
	// Step is what an answer given in place left on its row: what was
	// recorded, or why nothing was, or the confirmation it awaits.
	Step *step
}

// itemView is one form item with who answered it, if anyone has.
type itemView struct {
	Item     core.FormItem
	Answered bool
	Answer   string
	By       string
	At       time.Time
}

// rank orders cards as the API lists open questions: hard to reverse
// first, then oldest, then by id. The page inserts new cards by it.
func rank(q *core.Question) string {
	r := "1"
	if q.Reversibility == core.HardToReverse {
		r = "0"
	}
	return fmt.Sprintf("%s%016d%s", r, q.CreatedAt.UnixMilli(), q.ID)
}

func (s *Server) cardOf(q *core.Question, v viewer) cardView {
	q.Normalize()
	c := cardView{
		Q: q, Rank: rank(q), Heading: card.KindTitle(q.Kind), Hard: q.Reversibility == core.HardToReverse, AtAsk: !q.Open() && core.DecidedAtAsk(q),
		Age: age(s.now().Sub(q.CreatedAt)), Options: q.Options, CSRF: v.CSRF,
	}
	rooms := make([]core.Room, len(q.Messages))
	for i, m := range q.Messages {
		rooms[i] = core.Room{Surface: m.Surface, ID: m.Room}
	}
	c.Rooms = shownRooms(rooms)
	callsOf(&c, q)
	for _, it := range q.Items {
		iv := itemView{Item: it}
		if a, ok := q.Answered(it.ID); ok {
			iv.Answered, iv.By, iv.At = true, card.PartBy(a), a.At
			iv.Answer = it.Shown(a.OptionID, a.Text)
		}
		c.Items = append(c.Items, iv)
	}
	// A row that closes while shown stays, with its outcome: folded, it
	// still says which question it is.
	c.FirstLine, c.Then = firstLine(q.Text), s.thenAt(q)
	if !q.Open() {
		c.Outcome, c.Choice = namedLine(card.OutcomeLine(q), namesOf(q)), card.ChoiceLabel(q)
		c.Reason = shownReason(q)
		return c
	}
	c.Due = due(q.Deadline.Sub(s.now()))
	if t := card.TallyOf(q); t != nil {
		c.Votes = t.Lines
		c.Tally = slices.Clone(t.Lines)
	}
	if c.Progress != "" {
		c.Tally = append(c.Tally, c.Progress)
	} else if q.Kind == core.KindForm && len(q.Items) > 0 {
		c.Tally = append(c.Tally, card.FormProgress{Done: len(q.Answers), Total: len(q.Items)}.String())
	}
	c.ReadOnly = !v.Account.Role.MayAnswer()
	// Withdrawing is the role's, on any open question, as on the API: a
	// route lists who may answer, not who may take a question back.
	c.CanCancel = v.Account.Role.MayWithdraw()
	// A vote cast is the viewer's say on it: core refuses a second, so
	// the card shows the vote instead of the buttons (voted.go).
	c.Voted = s.votedOf(q, v.Account)
	if v.Account.Role.MayAnswer() {
		switch {
		case !s.svc.MayAnswer(q, v.decider()):
			c.NotDecider = fmt.Sprintf("Route %q does not list %s among its console deciders.", q.Route, v.Account.Name)
		case c.Voted == nil:
			c.Controls = true
		}
	}
	return c
}

// thenAt is what q's next deadline does, in core's one rule of it
// (core.AtDeadline), which Tick follows, worded by card.ThenWords.
func (s *Server) thenAt(q *core.Question) string {
	_, escalates := s.svc.EscalationOf(q)
	return card.ThenWords(q, core.AtDeadline(q, escalates))
}

// shownReason is the words a closed card shows as its reason, beside
// core's outcome line: an answer's note or a verdict's reason, and an
// operator's reason for withdrawing, which that line leaves out. An
// agent's reason is in the line already ("Withdrawn by the agent ...:
// why"), as is who withdrew it in the words of a withdrawal given no
// reason (core.DefaultCancelReason); a decline's is the server's own.
func shownReason(q *core.Question) string {
	r := q.Resolution
	switch {
	case r == nil:
		return ""
	case q.State == core.StateAnswered:
		return r.Reason
	case core.CloserOf(q) == core.CloserOperatorCancel && r.Reason != core.DefaultCancelReason(r.Decider):
		return r.Reason
	}
	return ""
}

// age is how long ago, short and rough, for people: "just now", "5m ago",
// "3h ago", "2d ago". times.js words it again as a page stays open,
// by the same rules (its ago): change both together.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h ago"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d ago"
}

// firstLineLen bounds a question's first line wherever a list names it.
const firstLineLen = 140

// firstLine is a question as every list names it (a folded row, the
// Closed list, the People page, "while you were away"): up to its first
// line break, whichever kind it is, cut to firstLineLen so that a long
// line cannot stretch a page.
func firstLine(text string) string {
	line := strings.TrimSpace(text)
	if i := strings.IndexAny(line, textlimit.LineBreaks); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	return textlimit.Runes.Cut(line, firstLineLen)
}

// due words the time left before the deadline as the rows show it.
// times.js words it again as a page stays open, by the same rules (its
// due): change both together.
func due(left time.Duration) string {
	if left <= 0 {
		return "due now"
	}
	switch {
	case left < time.Minute:
		return "due in under a minute"
	case left < time.Hour:
		return "due in " + strconv.Itoa(int(left/time.Minute)) + "m"
	case left < 48*time.Hour:
		return "due in " + strconv.Itoa(int(left/time.Hour)) + "h"
	}
	return "due in " + strconv.Itoa(int(left/(24*time.Hour))) + "d"
}

// filters are the inbox's URL filters, so a link can be shared.
type filters struct {
	Route, Kind, Agent, Project, Reversibility string
}

func parseFilters(v url.Values) (filters, error) {
	f := filters{
		Route: strings.TrimSpace(v.Get("route")), Kind: v.Get("kind"), Agent: strings.TrimSpace(v.Get("agent")),
		Project: strings.TrimSpace(v.Get("project")), Reversibility: v.Get("reversibility"),
	}
	if err := f.open().Check(); err != nil {
		return f, errors.New(core.ErrorMessage(err))
	}
	return f, nil
}

// open is the filters as core's, which every store pages by.
func (f filters) open() core.OpenFilter {
	return core.OpenFilter{Route: f.Route, Kind: f.Kind, Agent: core.AgentID(f.Agent), Project: f.Project, Reversibility: core.Reversibility(f.Reversibility)}
}

func (f filters) match(q *core.Question) bool { return f.open().Match(q) }

// Query is the filters as a URL query, "" when there are none.
func (f filters) Query() string {
	v := url.Values{}
	for k, val := range map[string]string{"route": f.Route, "kind": f.Kind, "agent": f.Agent, "project": f.Project, "reversibility": f.Reversibility} {
		if val != "" {
			v.Set(k, val)
		}
	}
	return v.Encode()
}

// Any reports whether any filter is set.
func (f filters) Any() bool { return f != filters{} }
