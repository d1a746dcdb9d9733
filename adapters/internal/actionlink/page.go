package actionlink

import (
	"context"
	_ "embed"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/rs/zerolog"
)

// Service is what the page needs of core: read a question, record an
// answer or a decline through the chokepoint, and the clock that set the
// deadlines its links expire with (core.Service.Now).
type Service interface {
	Get(ctx context.Context, id core.QuestionID) (*core.Question, error)
	Answer(ctx context.Context, in core.AnswerInput) (core.Outcome, error)
	Decline(ctx context.Context, id core.QuestionID, d core.Decider) (core.Outcome, error)
	// MayAnswer is the chokepoint's own check of who may decide a
	// question, asked without recording anything: a GET is no attempt.
	MayAnswer(q *core.Question, d core.Decider) bool
	// ActRefusal is the same check of one action, with what that
	// action asks beyond it (a standing approval only the route's own
	// deciders grant): what confirming it would be refused with, or nil.
	// The page offers only actions with none, and records nothing.
	ActRefusal(q *core.Question, r core.Ref, d core.Decider) error
	Now() time.Time
}

// Page serves one surface's links under Prefix: a GET shows what the link
// would do and records nothing (mail scanners and link previews open
// links), a POST does it as the link's recipient.
type Page struct {
	Svc    Service
	Signer *Signer
	// Surface is the only surface whose tokens this page takes: an
	// email link is not good at the ntfy endpoint.
	Surface core.Surface
	// Prefix is the path the page is mounted on, ending in "/"; the
	// token follows it.
	Prefix string
	// ConfirmAddress makes a POST name the address the link was sent
	// to, so a link forwarded to someone else records nothing.
	ConfirmAddress bool
	// Now is the clock links expire by; nil is Svc's (Clock).
	Now func() time.Time
	Log zerolog.Logger
	// Refused, when set, is called before the page answers a POST that
	// recorded nothing, with the link's claims and what the page says;
	// not for a link askbridge did not sign, whose claims are no one's.
	// ntfy's app shows only the status of such a POST, never its page.
	Refused func(r *http.Request, c Claims, n Note)
}

// Note is what the page told whoever used a link: its title, the
// sentence that matters (with how the question ended, once closed), and
// the question it was about.
type Note struct {
	Title, Message, Question string
}

//go:embed page.html
var pageHTML string

var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

// MaxBody bounds a POST: the edited arguments are the largest thing a
// page takes.
const MaxBody = 1 << 20

// view is what page.html shows.
type view struct {
	Title string
	// Message is the one sentence that matters: what was recorded, or
	// why nothing was.
	Message string
	Failed  bool
	// Question, Outcome: the question's text and, once closed, how it
	// ended.
	Question string
	Outcome  string
	// Choice is what was chosen, once closed; Parts how the question
	// stands (decided parts, votes, progress).
	Choice string
	Parts  []string
	// Call is an approval's tool and arguments.
	Call string
	// Form is set while the link can still act.
	Form *form
	// Choices are a menu link's actions, each a link to its own page.
	Choices []choice
}

type choice struct{ Label, URL string }

type form struct {
	Label   string
	Who     string
	Input   card.Input
	Text    string
	Address bool
	// Prompt is what the text box is for.
	Prompt string
}

// Clock is the time links expire by, the one default of it for every
// door: the caller's Now where it gave one, else its service's, the clock
// that set the deadlines the links expire with. Never the wall clock: a
// door that gave no clock would read a link of a question still open on
// the service's clock as expired, or one past its deadline as good. A
// door reads its own time here too (ntfy paces its notes by it), so the
// door and its page keep one clock.
func (p *Page) Clock() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return p.Svc.Now()
}

// ServeHTTP takes GET and HEAD (show) and POST (act).
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.URL.Path, p.Prefix)
	if !ok || token == "" || strings.Contains(token, "/") {
		p.render(w, http.StatusNotFound, view{Title: "Not found", Failed: true, Message: card.RefusalNote(core.ErrNotFound)})
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		p.show(w, r, token)
	case http.MethodPost:
		p.act(w, r, token)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		p.render(w, http.StatusMethodNotAllowed, view{Title: "Not allowed", Failed: true, Message: "Open the link, or confirm on its page."})
	}
}

// claims checks the token, and reads its question when the token is
// good or merely expired. An expired link's closed question is shown as
// it ended, so a late click learns the outcome whatever state the link
// is in; an expired link whose open question's deadline has moved on
// since (an escalation, a reask) still works.
func (p *Page) claims(ctx context.Context, token string) (Claims, *core.Question, *view, int) {
	now := p.Clock()
	c, err := p.Signer.Verify(token, now)
	// A link is only ever its own surface's, expired or not: another
	// page may not ask what its own asks (the email page, the address).
	if errors.Is(err, ErrAltered) || c.Surface != p.Surface {
		return c, nil, &view{Title: "Link not valid", Failed: true, Message: sentence(ErrAltered) + " Nothing was recorded."}, http.StatusUnauthorized
	}
	q, qerr := p.Svc.Get(ctx, c.Ref.QuestionID)
	if qerr != nil {
		if core.ErrorCode(qerr) == core.CodeInternal {
			p.Log.Error().Err(qerr).Msg("actionlink: get failed")
			return c, nil, &view{Title: "Try again", Failed: true, Message: card.RefusalNote(qerr)}, http.StatusServiceUnavailable
		}
		return c, nil, &view{Title: "Not found", Failed: true, Message: card.RefusalNote(core.ErrNotFound)}, http.StatusNotFound
	}
	// A link expires at its question's deadline as it stood when the link
	// was sent; an escalation or a reask moves the deadline on and keeps
	// the question open to the people it was sent to, so the link lasts
	// as long.
	if errors.Is(err, ErrExpired) && (!q.Open() || !now.Before(q.Deadline)) {
		if !q.Open() {
			return c, q, closedView(q), http.StatusConflict
		}
		return c, q, &view{Title: "Link expired", Failed: true, Question: q.Text,
			Message: "This link expired on " + c.Expires.Format("2006-01-02 15:04 UTC") + ". Nothing was recorded."}, http.StatusGone
	}
	return c, q, nil, 0
}

func closedView(q *core.Question) *view {
	v := &view{Title: "Already closed", Failed: true, Question: q.Text,
		Message: "This question is closed. Nothing more can be recorded."}
	v.state(q)
	return v
}

// state fills in how q stands, as its card would show it: the parts
// decided so far, the votes, the progress, and once closed the outcome.
func (v *view) state(q *core.Question) {
	shown := card.New(q, core.MessageRef{Kind: core.DeliverPost})
	for _, s := range shown.Sections {
		if s.Kind == card.SectionCall && !q.IsBatch() {
			// What an approval approves, on the page that approves it.
			v.Call = "Tool: " + s.Title + "\n" + s.Body
		}
		if a := s.Answer; a != nil {
			line := s.Title + ": " + a.Text
			if a.By != "" {
				line += " (by " + a.By + ")"
			}
			v.Parts = append(v.Parts, line)
		}
	}
	if shown.Tally != nil {
		v.Parts = append(v.Parts, shown.Tally.Lines...)
	}
	if shown.Progress != nil && shown.Outcome == nil {
		v.Parts = append(v.Parts, shown.Progress.String())
	}
	if o := shown.Outcome; o != nil {
		v.Outcome = o.Line
		if o.Label != "" {
			v.Choice = o.Label + ": " + o.Choice
		}
		if o.Reason != "" {
			v.Parts = append(v.Parts, "Reason: "+o.Reason)
		}
	}
}

// errNotDecider stands for the chokepoint's refusal of someone its
// routes do not allow, for card.RefusalNote to word as it words the
// POST's: the note goes by the code alone.
var errNotDecider = core.Errorf(core.CodeForbidden, "show", "not a decider for this question")

// show renders what the link would do, and changes nothing.
func (p *Page) show(w http.ResponseWriter, r *http.Request, token string) {
	c, q, bad, status := p.claims(r.Context(), token)
	if bad != nil {
		p.render(w, status, *bad)
		return
	}
	if !q.Open() {
		// A late click: how it ended. The read itself succeeded.
		p.render(w, http.StatusOK, *closedView(q))
		return
	}
	if !p.Svc.MayAnswer(q, core.Decider{Surface: c.Surface, ID: c.To}) {
		// Sent the question, but not one who may decide it: told so now,
		// in the POST's words, rather than after confirming a form that
		// could only be refused. Nothing is recorded: a GET is opened by
		// scanners and previews, and is no attempt.
		v := view{Title: "Not yours to answer", Failed: true, Question: q.Text, Message: card.RefusalNote(errNotDecider)}
		v.state(q)
		p.render(w, http.StatusForbidden, v)
		return
	}
	if c.Menu {
		p.render(w, http.StatusOK, p.menu(q, c))
		return
	}
	f, ok := p.formFor(q, c)
	if !ok {
		v := view{Title: "Nothing to do", Failed: true, Question: q.Text, Message: notOffered(q, c.Ref)}
		v.state(q)
		p.render(w, http.StatusOK, v)
		return
	}
	if err := p.Svc.ActRefusal(q, c.Ref, core.Decider{Surface: c.Surface, ID: c.To}); err != nil {
		// One who may decide, but not this way (a standing approval
		// offered to someone an escalation let in): told why now, in
		// core's words (card.RefusalNote, as every door words it), with
		// the choices they may take instead.
		v := p.menu(q, c)
		v.Title, v.Failed = "Not yours to choose", true
		v.Message = card.RefusalNote(err)
		p.render(w, http.StatusForbidden, v)
		return
	}
	v := view{Title: card.KindTitle(q.Kind), Question: q.Text, Form: &f}
	v.state(q)
	p.render(w, http.StatusOK, v)
}

// act records the link's action as its recipient, through the chokepoint.
func (p *Page) act(w http.ResponseWriter, r *http.Request, token string) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	if err := r.ParseForm(); err != nil {
		p.render(w, http.StatusBadRequest, view{Title: "Not recorded", Failed: true, Message: "The form could not be read. Nothing was recorded."})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	c, q, bad, status := p.claims(ctx, token)
	if bad != nil {
		if status == http.StatusUnauthorized {
			p.render(w, status, *bad) // not a link of ours: no one to tell
			return
		}
		p.refuse(w, r, c, status, *bad)
		return
	}
	if c.Menu {
		w.Header().Set("Allow", "GET, HEAD")
		p.refuse(w, r, c, http.StatusMethodNotAllowed, view{Title: "Not recorded", Failed: true, Question: q.Text,
			Message: "This link lists the choices; open it and pick one. Nothing was recorded."})
		return
	}
	// A closed question still goes to the chokepoint, which refuses the
	// late answer as it refuses a late click anywhere, and says why.
	f, ok := p.formFor(q, c)
	if !ok && q.Open() {
		v := view{Title: "Not recorded", Failed: true, Question: q.Text, Message: notOffered(q, c.Ref)}
		v.state(q)
		p.refuse(w, r, c, http.StatusConflict, v)
		return
	}
	text := r.PostForm.Get("text")
	if p.ConfirmAddress && !strings.EqualFold(strings.TrimSpace(r.PostForm.Get("address")), c.To) && !q.Open() {
		// Nothing could be recorded anyway: say how it ended, as to
		// anyone late, without an attempt in the recipient's name.
		v := view{Title: "Not recorded", Failed: true, Question: q.Text, Message: card.RefusalNote(&core.ClosedError{Question: q})}
		v.state(q)
		p.refuse(w, r, c, http.StatusConflict, v)
		return
	}
	if p.ConfirmAddress && !strings.EqualFold(strings.TrimSpace(r.PostForm.Get("address")), c.To) {
		v := view{Title: "Not recorded", Failed: true, Question: q.Text,
			Message: "This link was sent to " + Mask(c.To) + ", and the address given is not that one. " +
				"Nothing was recorded. If the message was forwarded to you, ask for the question to be sent to you."}
		if ok {
			f.Text = text
			v.Form = &f
		}
		p.refuse(w, r, c, http.StatusForbidden, v)
		return
	}
	d := core.Decider{Surface: c.Surface, ID: c.To}
	var (
		out core.Outcome
		err error
	)
	if c.Ref.Action == core.RefDecline {
		out, err = p.Svc.Decline(ctx, q.ID, d)
	} else {
		var in core.AnswerInput
		if in, err = core.AnswerFor(q, c.Ref, d, text); err == nil {
			out, err = p.Svc.Answer(ctx, in)
		}
	}
	if err != nil {
		var closed *core.ClosedError
		code := core.ErrorCode(err)
		status := map[core.Code]int{core.CodeForbidden: http.StatusForbidden, core.CodeNotFound: http.StatusNotFound,
			core.CodeConflict: http.StatusConflict, core.CodeInvalid: http.StatusBadRequest}[code]
		if status == 0 {
			p.Log.Error().Err(err).Str("question", string(q.ID)).Msg("actionlink: answer failed")
			status = http.StatusServiceUnavailable
		}
		v := view{Title: "Not recorded", Failed: true, Question: q.Text, Message: card.RefusalNote(err)}
		if errors.As(err, &closed) {
			if closed.Own { // a double tap: its second response is the page a browser shows
				v.Title = "Already recorded"
			}
			v.state(closed.Question)
		} else if code == core.CodeInvalid && ok {
			// Shown again with what was typed, to be put right.
			f.Text = text
			v.Form = &f
		}
		p.refuse(w, r, c, status, v)
		return
	}
	v := view{Title: "Recorded", Question: q.Text, Message: card.RecordedNote(out.Question, c.Ref)}
	if out.Question != nil {
		v.state(out.Question)
	}
	p.render(w, http.StatusOK, v)
}

// refuse answers a POST of link c that recorded nothing with page v,
// having told Refused what v says.
func (p *Page) refuse(w http.ResponseWriter, r *http.Request, c Claims, status int, v view) {
	if p.Refused != nil {
		msg := v.Message
		if v.Outcome != "" && !strings.Contains(msg, v.Outcome) {
			msg += " " + v.Outcome + "."
		}
		if v.Choice != "" {
			msg += "\n" + v.Choice
		}
		p.Refused(r, c, Note{Title: v.Title, Message: msg, Question: v.Question})
	}
	p.render(w, status, v)
}

// formFor finds the link's action on q's card as it stands: its label,
// and whether it takes text. An action the card no longer offers (a form
// item answered meanwhile) is not found.
func (p *Page) formFor(q *core.Question, c Claims) (form, bool) {
	shown := card.New(q, core.MessageRef{Surface: c.Surface, Room: c.To, Kind: core.DeliverPost})
	for _, a := range Actions(shown) {
		if a.Ref != c.Ref {
			continue
		}
		// Never the recipient whole: anyone who opens the URL reads the
		// page, and an ntfy topic works as a password.
		who := core.DeciderLabel(core.Decider{Surface: c.Surface, ID: c.To})
		if p.ConfirmAddress {
			// Masked: whoever confirms types the address themselves.
			who = Mask(c.To)
		}
		f := form{Label: pageLabel(a.Label, card.LabelSendAnswer), Who: who, Input: a.Input, Text: a.Prefill, Address: p.ConfirmAddress}
		switch a.Input {
		case card.InputRequired:
			f.Prompt = "Your answer"
			if c.Ref.Item >= 0 && c.Ref.Item < len(q.Items) {
				f.Prompt = q.Items[c.Ref.Item].Question
			}
		case card.InputOptional:
			f.Prompt = "Reason (optional)"
		case card.InputArguments:
			f.Prompt = "The arguments to approve, as JSON"
		}
		return f, true
	}
	return form{}, false
}

// Actions are every button of c, in the order a card shows them: each
// section's, then the card's own.
func Actions(c card.Card) []card.Action {
	var out []card.Action
	for _, s := range c.Sections {
		out = append(out, s.Actions...)
	}
	return append(out, c.Actions...)
}

// Mask shows enough of an address for its owner to recognise it: the
// first character of the local part and the domain.
func Mask(addr string) string {
	local, domain, ok := strings.Cut(addr, "@")
	first, _ := utf8.DecodeRuneInString(local)
	if !ok || local == "" || first == utf8.RuneError {
		return "another recipient"
	}
	return string(first) + "…@" + domain
}

// sentence is err's text as a sentence.
func sentence(err error) string {
	s := err.Error()
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func (p *Page) render(w http.ResponseWriter, status int, v view) {
	h := w.Header()
	if status == http.StatusUnauthorized {
		// The link is the credential; a browser shows the page, and
		// prompts for nothing, for a scheme it does not know.
		h.Set("WWW-Authenticate", `ActionLink realm="askbridge"`)
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	// The token is in the URL: never cached, never sent on as a referrer,
	// never framed, never indexed.
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Robots-Tag", "noindex, nofollow")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	if err := pageTmpl.Execute(w, v); err != nil {
		p.Log.Warn().Err(err).Msg("actionlink: page not written")
	}
}
