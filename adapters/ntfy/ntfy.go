// Package ntfy is askbridge's push door: each question is published to
// an ntfy topic (self-hosted or ntfy.sh) as a notification whose action
// buttons answer it. A button that needs nothing typed is an http action
// that POSTs a signed, single-use link (adapters/internal/actionlink)
// straight back to askbridge, so Approve works from the lock screen; one
// that needs text opens the link's page in the browser. The tap records
// the answer through the chokepoint as the topic it was published to (a
// person's own topic makes it that person).
//
// ntfy cannot edit a notification once sent, so when the question closes
// nothing is published again; a button tapped later is told the outcome:
// on the page, and, as the app shows only a refused request's status, in
// a notification of its own (tapnote.go).
package ntfy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/rs/zerolog"
)

// ActPath is where the buttons point, below the public URL.
const ActPath = "/ntfy/act/"

// Limits of ntfy's that publishing keeps (docs.ntfy.sh/publish).
const (
	// MaxMessage is a message's limit in bytes; a longer one would
	// become an attachment.
	MaxMessage = 4096
	// MaxActions is how many buttons a notification holds.
	MaxActions = 3
	maxTitle   = 200
	maxLabel   = 40
)

// MoreLabel is the button that opens the page of every choice when a
// question has more than fit on a notification.
const MoreLabel = "More choices"

// Options configure an Adapter.
type Options struct {
	// ServerURL is the ntfy server's base URL (https://ntfy.sh).
	ServerURL string
	// Token, when set, is sent as "Authorization: Bearer". With a
	// token (or a password in ServerURL) the server URL must be https,
	// or http to a loopback address, unless TokenOverHTTP is set.
	Token string
	// TokenOverHTTP lets the token go over plain http to another
	// machine: for a server on a network the operator trusts to carry
	// it (a compose network, a cluster's service), never by accident.
	TokenOverHTTP bool
	// PublicURL is where the phone reaches askbridge; the buttons are
	// PublicURL + ActPath + token.
	PublicURL string
	// Key is the server's key; the links are signed with a key derived
	// from it.
	Key []byte
	// Now is the clock links expire by, a refused tap's notifications
	// are paced by and a Retry-After date is read against; nil is the
	// service's (core.Service.Now), defaulted by the page
	// (actionlink.Page.Clock), so that a deadline and the link that
	// expires with it read the same clock.
	Now func() time.Time
	// HTTPClient publishes; nil is one with a 30 s timeout. A copy of it
	// is used, whose redirect policy follows none (noRedirects).
	HTTPClient *http.Client
	Log        zerolog.Logger
}

// Adapter is the ntfy door: a core.Courier that publishes, and the page
// its buttons reach.
type Adapter struct {
	svc    *core.Service
	opts   Options
	signer *actionlink.Signer
	page   *actionlink.Page
	http   *http.Client
	log    zerolog.Logger
	notes  tapNotes // when each topic was last told of a refused tap
}

var _ core.ChatAdapter = (*Adapter)(nil)

// New checks opts and returns the adapter; it makes no call to ntfy.
func New(svc *core.Service, opts Options) (*Adapter, error) {
	for _, v := range []struct{ name, url string }{{"server", opts.ServerURL}, {"public", opts.PublicURL}} { // the same refusal every time
		if !strings.HasPrefix(v.url, "http://") && !strings.HasPrefix(v.url, "https://") {
			return nil, fmt.Errorf("ntfy: the %s URL %q is not an http(s) URL", v.name, v.url)
		}
	}
	if err := checkCredentialTransport(opts); err != nil {
		return nil, err
	}
	signer, err := actionlink.NewSigner(opts.Key)
	if err != nil {
		return nil, fmt.Errorf("ntfy: %w", err)
	}
	opts.ServerURL = strings.TrimSuffix(opts.ServerURL, "/")
	opts.PublicURL = strings.TrimSuffix(opts.PublicURL, "/")
	client := &http.Client{Timeout: 30 * time.Second}
	if opts.HTTPClient != nil {
		copied := *opts.HTTPClient
		client = &copied
	}
	client.CheckRedirect = noRedirects
	a := &Adapter{svc: svc, opts: opts, signer: signer, http: client, log: opts.Log}
	a.page = &actionlink.Page{Svc: svc, Signer: signer, Surface: core.SurfaceNtfy, Prefix: ActPath, Now: opts.Now, Log: opts.Log,
		Refused: a.tellTapper}
	return a, nil
}

// checkCredentialTransport refuses a token, or a password in the server
// URL, that would cross a network in the clear: the server URL is https,
// or http to this machine (a local proxy or fake), unless the operator
// said the network may carry it (TokenOverHTTP). The other platforms'
// endpoints are held to the same rule, with no way round it; ntfy has
// one because a self-hosted server is often reached over a private
// network by its service name. A server without a credential may be
// reached over http: it is sent only what its subscribers read.
func checkCredentialTransport(opts Options) error {
	u, err := url.Parse(opts.ServerURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("ntfy: the server URL is not an http(s) URL")
	}
	if opts.TokenOverHTTP || u.Scheme != "http" || loopback(u.Hostname()) || opts.Token == "" && u.User == nil {
		return nil
	}
	return fmt.Errorf("ntfy: the server URL %q is http to another machine, which would carry the access token or password in the clear: "+
		"use https (http takes a token only to a loopback address, or where the network is trusted to carry it)", u.Redacted())
}

// loopback reports whether host names this machine's loopback.
func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// Surface is ntfy.
func (a *Adapter) Surface() core.Surface { return core.SurfaceNtfy }

// Run has nothing to receive: taps arrive at the page. It waits for ctx.
func (a *Adapter) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// Mount adds the buttons' page.
func (a *Adapter) Mount(mux *http.ServeMux) { mux.Handle(ActPath, a.page) }

// Topic is the topic a room names: a route's topic is the room itself, a
// person's direct messages go to their own topic (core.DMRoom).
func Topic(room string) string {
	if t, ok := core.DMUser(room); ok {
		return t
	}
	return room
}

// Post publishes q's card to the topic ref.Room. A question that closed
// before it went out is not published: the delivery is dropped, and
// recorded as undelivered.
func (a *Adapter) Post(ctx context.Context, q *core.Question, ref core.MessageRef) (core.MessageRef, error) {
	if !q.Open() {
		return ref, &core.Permanent{Err: errors.New("not published: the question closed before the notification went out")}
	}
	topic := Topic(ref.Room)
	p, err := a.publication(q, card.New(q, ref), topic)
	if err != nil {
		return ref, &core.Permanent{Err: err}
	}
	id, err := a.publish(ctx, p)
	if err != nil {
		return ref, err
	}
	ref.ID = id
	return ref, nil
}

// Update does nothing: ntfy cannot change a sent notification, and a
// closed question is published to nobody again. A later tap is told how
// it ended.
func (a *Adapter) Update(context.Context, *core.Question, core.MessageRef) error { return nil }

// Remind publishes the card again with fresh buttons, unless the topic,
// or the person it is, has already acted on it (from any surface).
func (a *Adapter) Remind(ctx context.Context, q *core.Question, room string) error {
	topic := Topic(room)
	if a.svc.HasActed(q, core.SurfaceNtfy, topic) {
		return nil
	}
	view := card.New(q, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost})
	view.Markers = append([]card.Marker{card.MarkerReminder}, view.Markers...)
	// Who it is still waiting for, as every surface's reminder says.
	view.Mentions = a.svc.CallOn(q, core.SurfaceNtfy)
	p, err := a.publication(q, view, topic)
	if err != nil {
		return &core.Permanent{Err: err}
	}
	_, err = a.publish(ctx, p)
	return err
}

// Digest publishes the "while you were away" summary.
func (a *Adapter) Digest(ctx context.Context, d core.Digest, room string) error {
	p := RenderDigest(d, Topic(room))
	if _, personal := core.DMUser(room); personal {
		p.Title += ": what is open for you"
	}
	_, err := a.publish(ctx, p)
	return err
}

// publication is card as a notification for topic, its buttons signed
// for that topic, but none for an act topic may not take though it may
// answer (offered).
func (a *Adapter) publication(q *core.Question, c card.Card, topic string) (Publication, error) {
	c = a.offered(q, c, topic)
	base := a.opts.PublicURL + ActPath
	links, err := a.signer.Links(q, c, core.SurfaceNtfy, topic, base)
	if err != nil {
		return Publication{}, err
	}
	menu, err := a.signer.MenuLink(q, c, core.SurfaceNtfy, topic, base)
	if err != nil {
		return Publication{}, err
	}
	return Render(c, topic, links, menu), nil
}

// Publication is a message published as JSON (docs.ntfy.sh/publish,
// "Publish as JSON"): the fields askbridge uses.
type Publication struct {
	Topic    string   `json:"topic"`
	Title    string   `json:"title,omitempty"`
	Message  string   `json:"message"`
	Tags     []string `json:"tags,omitempty"`
	Priority int      `json:"priority,omitempty"`
	Click    string   `json:"click,omitempty"`
	Actions  []Action `json:"actions,omitempty"`
}

// Action is one button: "http" (a request the app sends when tapped) or
// "view" (a page the app opens).
type Action struct {
	Action string `json:"action"`
	Label  string `json:"label"`
	URL    string `json:"url"`
	Method string `json:"method,omitempty"`
	// Clear takes the notification away once the request succeeded.
	Clear bool `json:"clear,omitempty"`
}

// Render is c as a notification for topic: what is asked in the
// message, and up to three buttons. An action that needs nothing typed
// is an http button that answers at once (a deny, without a reason); one
// that needs text opens its page. When more actions than fit, the last
// button opens the page of every choice (menu), which tapping the
// notification itself opens too.
//
// A tool call the message cannot show whole (its arguments over what
// fits) gets no http button: each action opens its page, which shows the
// call whole before it records anything, so nobody approves from the lock
// screen arguments they were never shown. Nor do buttons whose labels
// read the same once cut: nothing on them says which is which. Nor, for
// the same reason, does a message cut further to make a body ntfy takes
// (fit, MaxBody).
func Render(c card.Card, topic string, links []actionlink.Link, menu string) Publication {
	msg, whole := message(c)
	p := Publication{Topic: topic, Title: title(c), Message: msg, Priority: 3, Click: menu}
	for _, m := range c.Markers {
		if m.Warning() {
			p.Priority, p.Tags = 4, []string{"warning"}
		}
	}
	shown := links
	if len(links) > MaxActions {
		shown = links[:MaxActions-1]
	}
	labels, alike := make([]string, len(shown)), map[string]int{}
	for i, l := range shown {
		labels[i] = label(l.Action)
		alike[labels[i]]++
	}
	for i, l := range shown {
		act := Action{Action: "view", Label: labels[i], URL: l.URL}
		if whole && alike[act.Label] == 1 && (l.Action.Input == card.InputNone || l.Action.Input == card.InputOptional) {
			act.Action, act.Method, act.Clear = "http", http.MethodPost, true
		}
		p.Actions = append(p.Actions, act)
	}
	if len(links) > MaxActions {
		p.Actions = append(p.Actions, Action{Action: "view", Label: MoreLabel, URL: menu})
	}
	return fit(p)
}

// label is a's label within ntfy's, cut before its Keep (a recommended
// choice's note), which stays whole. The answer in words is typed on the
// page the button opens, as nothing reads a reply to a notification, so
// its button says that rather than "Reply to answer" (LinkLabel).
func label(a card.Action) string {
	head := actionlink.LinkLabel(a.Head())
	return textlimit.Runes.CutKeeping(textlimit.OneLine(head), a.Keep, maxLabel)
}

func title(c card.Card) string {
	t := c.Heading
	for _, m := range c.Markers {
		if m == card.MarkerReminder {
			t = m.Text() + ": " + t
		}
	}
	if c.Outcome != nil {
		t = "Closed: " + t
	}
	return textlimit.Runes.Cut(textlimit.OneLine(t), maxTitle)
}

// message is the card as plain text within ntfy's limit: the question
// first, what to choose from, then who asks; what does not fit is cut
// from the longest parts, never the question's start. whole reports
// whether every tool call's arguments are in it uncut.
func message(c card.Card) (text string, whole bool) {
	whole = true
	callsEnd := 0
	var b strings.Builder
	for _, m := range c.Markers {
		if m != card.MarkerReminder {
			b.WriteString(m.Text() + "\n")
		}
	}
	b.WriteString(cut(c.Text, 1200) + "\n")
	// A topic works as a password: whoever is waited on is named, never
	// their topic, and a topic with no person is counted.
	waiting := card.NamedOnly(c.Mentions)
	if len(waiting) > 0 {
		b.WriteString(card.AwaitingLabel + ": " + cut(strings.Join(waiting, ", "), 300) + "\n")
	}
	for _, s := range c.Sections {
		switch s.Kind {
		case card.SectionContext:
			b.WriteString("\n" + cut(s.Body, 600) + "\n")
		case card.SectionOption:
			rec := ""
			if s.Recommended {
				rec = card.RecommendedNote
			}
			b.WriteString(fmt.Sprintf("\n%d. %s%s: %s\n", s.Index+1, cut(s.Title, 100), rec, cut(s.Body, 300)))
		case card.SectionCall:
			body := cut(s.Body, 1000)
			whole = whole && body == strings.TrimSpace(s.Body) && len(s.Title) <= 100
			b.WriteString("\n" + cut(s.Title, 100) + "\n" + body + "\n")
			// Where the arguments end, so a cut at the message's limit
			// below can be told to have taken some.
			callsEnd = b.Len()
			if s.Answer != nil {
				b.WriteString("Decided: " + cut(s.Answer.Text, 100) + "\n")
			}
		case card.SectionItem:
			b.WriteString(fmt.Sprintf("\n%d. %s\n", s.Index+1, cut(s.Title, 200)))
			if s.Answer != nil {
				b.WriteString("Answered: " + cut(s.Answer.Text, 200) + "\n")
			}
			for _, ch := range s.Choices {
				b.WriteString("- " + cut(textlimit.OneLine(ch.Label), 100))
				if ch.Recommended {
					b.WriteString(card.RecommendedNote)
				}
				if d := cut(textlimit.OneLine(ch.Description), 150); d != "" {
					b.WriteString(": " + d)
				}
				b.WriteString("\n")
			}
		default:
			b.WriteString("\n" + cut(s.Title, 100) + "\n" + cut(s.Body, 300) + "\n")
		}
	}
	if c.Tally != nil {
		b.WriteString("\n" + strings.Join(c.Tally.Lines, "\n") + "\n")
	}
	if c.Progress != nil && c.Outcome == nil {
		b.WriteString("\n" + c.Progress.String() + "\n")
	}
	if o := c.Outcome; o != nil {
		b.WriteString("\n" + o.Line + "\n")
	}
	b.WriteString("\nAgent: " + cut(string(c.Meta.Agent), 100))
	if p := c.Meta.Labels.Project; p != "" {
		b.WriteString(" · project " + cut(p, 100))
	}
	if t := c.Meta.Labels.Task; t != "" {
		b.WriteString(" · task " + cut(t, 100))
	}
	if !c.Meta.Deadline.IsZero() {
		b.WriteString(" · answer by " + c.Meta.Deadline.UTC().Format("2006-01-02 15:04 UTC"))
	}
	text = textlimit.Bytes.Cut(textlimit.Clean(b.String()), MaxMessage)
	if callsEnd > 0 && len(text) < len(textlimit.Clean(b.String()[:callsEnd])) {
		whole = false // the limit took some of the arguments
	}
	return text, whole
}

func cut(s string, max int) string { return textlimit.Runes.Cut(strings.TrimSpace(s), max) }

// RenderDigest is the "while you were away" summary as a notification.
func RenderDigest(d core.Digest, topic string) Publication {
	var b strings.Builder
	fmt.Fprintf(&b, "%s asked, %s closed, %s still open.\n",
		card.DigestCount(len(d.Asked), d.AskedMore), card.DigestCount(len(d.Closed), d.ClosedMore), card.DigestCount(len(d.Open), d.OpenMore))
	for _, q := range d.Open {
		b.WriteString("\n- " + cut(textlimit.OneLine(q.Text), 150))
	}
	if d.OpenMore {
		b.WriteString("\n" + card.DigestNotListed(0, true))
	}
	return fit(Publication{Topic: topic, Title: card.DigestHeading, Message: textlimit.Bytes.Cut(b.String(), MaxMessage)})
}

// Send budgets every replica together keeps to (core.Budget): ntfy's
// default request limit for one visitor in all (a bucket of 60, refilled
// one every five seconds: docs.ntfy.sh/publish, "Limitations"), and at
// most one a second into a room (a route's topic, or a person's own
// copies) after a burst of three. A server that still answers 429 is
// waited out.
var (
	topicBudget = core.Limit{Rate: 1, Per: time.Second, Burst: 3}
	allBudget   = core.Limit{Rate: 12, Per: time.Minute, Burst: 60}
)

var _ core.Budgeted = (*Adapter)(nil)

// Budgets names what a delivery spends; an update publishes nothing.
func (a *Adapter) Budgets(d core.Delivery) []core.Allowance {
	if d.Kind == core.DeliverUpdate || d.Room == "" {
		return nil
	}
	return []core.Allowance{{Key: "ntfy:all", Limit: allBudget}, {Key: "ntfy:room:" + d.Room, Limit: topicBudget}}
}

// offered is c with only the actions topic may take
// (actionlink.Offered). An adapter with no service (a renderer's test)
// has none to ask.
func (a *Adapter) offered(q *core.Question, c card.Card, topic string) card.Card {
	if a.svc == nil {
		return c
	}
	return actionlink.Offered(a.svc, q, c, core.Decider{Surface: core.SurfaceNtfy, ID: topic})
}
