package chat

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/adapters/ntfy"
	"github.com/askbridge/askbridge/adapters/ntfy/ntfyfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestEmailScenarios and TestNtfyScenarios run the shared end-to-end
// scenarios against the real program with the email door (a local SMTP
// relay) and the ntfy door (a local ntfy server). Both are one-way: what
// they sent cannot change, so a card here is the message as sent plus
// what its links open to now (how the question stands, its outcome once
// closed), and its buttons are the links that still act.
// The scenario suites run alongside the other platforms' (each has its own
// program and fakes): most of their time is waiting on deliveries.
func TestEmailScenarios(t *testing.T) {
	t.Parallel()
	adaptertest.Run(t, &onewayDriver{surface: core.SurfaceEmail})
}

func TestNtfyScenarios(t *testing.T) {
	t.Parallel()
	adaptertest.Run(t, &onewayDriver{surface: core.SurfaceNtfy})
}

// linkBase is the public URL the program is told; links are followed on
// the program's own listener (as a reverse proxy would pass them on).
const linkBase = "https://askbridge.invalid"

// onewayDriver is the email or ntfy side of the shared scenarios: each
// user is a recipient (an address, a topic) with an inbox at the fake.
type onewayDriver struct {
	surface  core.Surface
	smtp     *emailfake.Server
	ntfy     *ntfyfake.Server
	settings app.Settings
	clock    core.Clock
	main     *app.Main
	// refOf reads a link of the program's (adaptertest.LinkRefs).
	refOf func(link string) string
}

func (d *onewayDriver) Surface() core.Surface { return d.surface }

func (d *onewayDriver) id(name string) string {
	if d.surface == core.SurfaceEmail {
		return name + "@example.test"
	}
	return name + "-phone"
}

func (d *onewayDriver) Allowed() adaptertest.User {
	return adaptertest.User{ID: d.id("alice"), Name: d.id("alice")}
}
func (d *onewayDriver) Allowed2() adaptertest.User {
	return adaptertest.User{ID: d.id("bob"), Name: d.id("bob")}
}
func (d *onewayDriver) Stranger() adaptertest.User {
	return adaptertest.User{ID: d.id("mallory"), Name: d.id("mallory")}
}

func (d *onewayDriver) Start(t *testing.T, clock core.Clock) adaptertest.Program {
	d.clock = clock
	refOf, err := adaptertest.LinkRefs([]byte(onewayKey))
	if err != nil {
		t.Fatal(err)
	}
	d.refOf = refOf
	env := map[string]string{"ASKBRIDGE_PUBLIC_URL": linkBase}
	if d.surface == core.SurfaceEmail {
		d.smtp = emailfake.Start(t, emailfake.Options{})
		host, port, _ := strings.Cut(d.smtp.Addr, ":")
		env["EMAIL_SMTP_HOST"], env["EMAIL_SMTP_PORT"], env["EMAIL_SMTP_TLS"], env["EMAIL_FROM"] = host, port, "none", "askbridge@bridge.example.test"
	} else {
		d.ntfy = ntfyfake.Start(t, "")
		env["NTFY_URL"] = d.ntfy.URL
	}
	s := apptest.FromEnv(t, env)
	a, b, m := d.Allowed(), d.Allowed2(), d.Stranger()
	// Everyone is sent the question; the stranger may not decide.
	d.settings = app.Settings{DataDir: t.TempDir(), Email: s.Email, Ntfy: s.Ntfy, PublicURL: s.PublicURL, ActorKey: app.Secret(onewayKey),
		File: app.File{
			Routes: map[string]app.RouteFile{"ops": {
				Rooms:    []core.Room{{Surface: d.surface, ID: a.ID}, {Surface: d.surface, ID: b.ID}, {Surface: d.surface, ID: m.ID}},
				Deciders: map[string][]string{string(d.surface): {a.ID, b.ID}, "api": {"ops"}},
			}},
			Policies: app.Policies{DowntimeThreshold: app.Duration(time.Hour)},
		}}
	apptest.AddTeam(&d.settings.File, d.surface, a.ID, a, b)
	// On a one-way door each person is their own room: bob clicks his own
	// copy, as nobody can act on another's.
	team := d.settings.File.Routes[adaptertest.TeamRoute]
	team.Rooms = []core.Room{{Surface: d.surface, ID: a.ID}, {Surface: d.surface, ID: b.ID}, {Surface: d.surface, ID: m.ID}}
	d.settings.File.Routes[adaptertest.TeamRoute] = team
	return d.boot(t)
}

func (d *onewayDriver) boot(t *testing.T) adaptertest.Program {
	t.Helper()
	d.main = apptest.StartClock(t, d.settings, d.clock)
	return adaptertest.Program{URL: d.main.URL, AgentToken: apptest.AgentA, OperatorToken: apptest.OpTok}
}

func (d *onewayDriver) Restart(t *testing.T, whileDown func()) adaptertest.Program {
	t.Helper()
	if err := d.main.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if whileDown != nil {
		whileDown()
	}
	return d.boot(t)
}

// sent is one message in an inbox.
type sent struct {
	id    string
	text  string
	links []adaptertest.Button // Value is the link's ref; url is kept beside it
	urls  map[string]string    // ref -> URL
	click string               // ntfy: the page of every choice
}

// inbox is what recipient has received, oldest first.
func (d *onewayDriver) inbox(recipient string) []sent {
	var out []sent
	if d.surface == core.SurfaceEmail {
		for _, m := range d.smtp.Mailbox(recipient) {
			s := sent{id: m.MessageID, text: m.Subject + "\n" + m.Text, urls: map[string]string{}}
			for _, a := range anchor.FindAllStringSubmatch(m.HTML, -1) {
				u, label := html.UnescapeString(a[1]), html.UnescapeString(a[2])
				r := d.refOf(u)
				s.links = append(s.links, adaptertest.Button{Label: label, Value: r})
				s.urls[r] = u
			}
			out = append(out, s)
		}
		return out
	}
	for _, m := range d.ntfy.Messages(recipient) {
		s := sent{id: m.ID, text: m.Title + "\n" + m.Message, click: m.Click, urls: map[string]string{}}
		for _, a := range m.Actions {
			if r := d.refOf(a.URL); r != "" && a.Label != ntfy.MoreLabel {
				s.urls[r] = a.URL
			}
		}
		out = append(out, s)
	}
	return out
}

var (
	anchor = regexp.MustCompile(`<a href="([^"]*)"[^>]*>([^<]*)</a>`)
	note   = regexp.MustCompile(`<p class="note[^"]*" role="status">([^<]*)</p>`)
	tags   = regexp.MustCompile(`<[^>]*>`)
	area   = regexp.MustCompile(`(?s)<textarea[^>]*>(.*?)</textarea>`)
)

// onewayKey is the program's actor key in these scenarios, from which
// its links' key is derived.
const onewayKey = "the one-way scenarios' actor key, long enough"

// local is link on the program's own listener.
func (d *onewayDriver) local(link string) string {
	return d.main.URL + strings.TrimPrefix(link, linkBase)
}

func (d *onewayDriver) fetch(t *testing.T, method, link string, form url.Values) (int, string) {
	t.Helper()
	var res *http.Response
	var err error
	if method == http.MethodPost {
		res, err = http.PostForm(d.local(link), form)
	} else {
		res, err = http.Get(d.local(link))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func pageText(body string) string { return html.UnescapeString(tags.ReplaceAllString(body, " ")) }

// cardNow is the card of question id in room as its recipient sees it
// now: the message as sent, and what its links open to (how the question
// stands; its outcome once closed, with no link left that acts).
func (d *onewayDriver) cardNow(t *testing.T, id core.QuestionID, room string) (adaptertest.Card, bool) {
	q, err := d.main.Service.Get(t.Context(), id)
	if err != nil {
		return adaptertest.Card{}, false
	}
	var msgID string
	for _, m := range q.Messages {
		if m.Surface == d.surface && m.Room == room {
			msgID = m.ID
		}
	}
	recipient := email.Recipient(room)
	for _, s := range d.inbox(recipient) {
		if msgID == "" || s.id != msgID {
			continue
		}
		c := adaptertest.Card{Room: room, ID: s.id, Text: s.text}
		if d.surface == core.SurfaceNtfy {
			// Every choice, from the page the notification opens.
			if s.click == "" {
				return c, true
			}
			_, body := d.fetch(t, http.MethodGet, s.click, nil)
			c.Text += "\n" + pageText(body)
			for _, a := range anchor.FindAllStringSubmatch(body, -1) {
				u := resolveHref(s.click, html.UnescapeString(a[1]))
				c.Buttons = append(c.Buttons, adaptertest.Button{Label: html.UnescapeString(a[2]), Value: d.refOf(u)})
			}
			return c, true
		}
		for i, b := range s.links {
			_, body := d.fetch(t, http.MethodGet, s.urls[b.Value], nil)
			if i == 0 {
				c.Text += "\n" + pageText(body)
			}
			if strings.Contains(body, "<form") {
				c.Buttons = append(c.Buttons, b)
			}
		}
		return c, true
	}
	return adaptertest.Card{}, false
}

func (d *onewayDriver) cardIn(t *testing.T, room string, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	w, err := d.main.Service.Watch(id)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	timeout := time.After(15 * time.Second)
	var last adaptertest.Card
	for {
		if c, ok := d.cardNow(t, id, room); ok {
			last = c
			if cond == nil || cond(c) {
				return c
			}
		}
		select {
		case <-w.Changed():
		case <-timeout:
			q, _ := d.main.Service.Get(t.Context(), id)
			evs, _ := d.main.Service.QuestionEvents(t.Context(), id, 100)
			var kinds []string
			for _, ev := range evs {
				kinds = append(kinds, string(ev.Kind)+" "+ev.Reason)
			}
			t.Fatalf("card of %s in %s never satisfied the condition; last seen %+v; recorded %+v; events %q", id, room, last, q.Messages, kinds)
		}
	}
}

func (d *onewayDriver) Card(t *testing.T, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.cardIn(t, d.Allowed().ID, id, cond)
}

// DM is u's own copy. The routes here send to each person's own address
// (or topic), which is where their direct messages would go too, so core
// sends one copy, not two (core's dmDeliveries): that room's.
func (d *onewayDriver) DM(t *testing.T, u adaptertest.User, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.cardIn(t, u.ID, id, cond)
}

// act confirms link as u, with text, and returns what the page told u.
func (d *onewayDriver) act(t *testing.T, u adaptertest.User, link, text string) string {
	t.Helper()
	form := url.Values{}
	if text != "" {
		form.Set("text", text)
	}
	if d.surface == core.SurfaceEmail {
		form.Set("address", u.ID)
	}
	_, body := d.fetch(t, http.MethodPost, link, form)
	if m := note.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

func (d *onewayDriver) Click(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	return d.act(t, u, d.link(t, u, c, b), "")
}

func (d *onewayDriver) Reply(t *testing.T, u adaptertest.User, c adaptertest.Card, b *adaptertest.Button, text string) {
	t.Helper()
	if b == nil {
		for i := range c.Buttons {
			if r, err := core.DecodeRef(c.Buttons[i].Value); err == nil && r.Action == core.RefText {
				b = &c.Buttons[i]
			}
		}
	}
	if told := d.act(t, u, d.link(t, u, c, *b), text); !strings.HasPrefix(told, "Recorded") {
		t.Fatalf("the reply was told %q", told)
	}
}

func (d *onewayDriver) Edit(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, args string) (string, string) {
	t.Helper()
	link := d.link(t, u, c, b)
	_, page := d.fetch(t, http.MethodGet, link, nil)
	m := area.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the edit page has no text box:\n%s", page)
	}
	return html.UnescapeString(m[1]), d.act(t, u, link, args)
}

func (d *onewayDriver) Deny(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	return d.act(t, u, d.link(t, u, c, b), "")
}

// Forge alters the link's signature. A link has no timestamp of its own
// to go stale: it expires with its question (the actionlink tests).
func (d *onewayDriver) Forge(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, f adaptertest.Forgery) (int, bool) {
	t.Helper()
	if f != adaptertest.BadSignature {
		return 0, false
	}
	link := d.link(t, u, c, b)
	last := link[len(link)-1]
	forged := link[:len(link)-1] + map[bool]string{true: "A", false: "B"}[last != 'A']
	form := url.Values{"address": {u.ID}}
	status, _ := d.fetch(t, http.MethodPost, forged, form)
	return status, true
}

// Posts are the room's messages that are not cards: reminders and the
// room's digest (a person's own digest, in the same inbox, says so).
func (d *onewayDriver) Posts(t *testing.T, cond func([]adaptertest.Post) bool) []adaptertest.Post {
	t.Helper()
	var posts []adaptertest.Post
	collect := func() bool {
		posts = nil
		for _, s := range d.inbox(d.Allowed().ID) {
			first, _, _ := strings.Cut(s.text, "\n")
			personal := strings.Contains(first, "open for you")
			// A reminder's mail keeps its card's subject after "Re: " (so
			// that it threads) and says it is one in its body; a push says
			// so in its title.
			reminder := strings.Contains(first, card.ReminderHeading) ||
				strings.HasPrefix(first, "Re: ") && strings.Contains(s.text, card.ReminderHeading)
			if !personal && (reminder || strings.HasPrefix(first, card.DigestHeading)) {
				posts = append(posts, adaptertest.Post{Text: s.text, Raw: s.text})
			}
		}
		return cond(posts)
	}
	var ok bool
	if d.surface == core.SurfaceEmail {
		_, ok = d.smtp.Wait(d.Allowed().ID, 15*time.Second, func([]emailfake.Message) bool { return collect() })
	} else {
		_, ok = d.ntfy.Wait(d.Allowed().ID, 15*time.Second, func([]ntfyfake.Message) bool { return collect() })
	}
	if !ok {
		t.Fatalf("the posts never satisfied the condition: %d posts", len(posts))
	}
	return posts
}
