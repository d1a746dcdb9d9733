package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	goslack "github.com/slack-go/slack"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

const (
	room   = "C0ROOM"
	secret = "test-signing-secret"
	group  = "S0GROUP"
	wait   = 10 * time.Second
)

var (
	alice   = slackfake.User{ID: "U0ALICE", Name: "Alice"}
	bob     = slackfake.User{ID: "U0BOB", Name: "Bob"} // decides through the group
	mallory = slackfake.User{ID: "U0MALLORY", Name: "Mallory"}
)

// env is a core service on the embedded store, the adapter on the fake
// Slack, its HTTP endpoints on a test server, and the outbox loop.
type env struct {
	t    *testing.T
	fake *slackfake.Fake
	svc  *core.Service
	a    *slack.Adapter
	srv  *httptest.Server
}

func newEnv(t *testing.T, socket bool) *env {
	t.Helper()
	return newEnvWith(t, socket, nil)
}

// newEnvWith is newEnv with the adapter's options changed by set first
// (nil changes nothing).
func newEnvWith(t *testing.T, socket bool, set func(*slack.Options)) *env {
	t.Helper()
	return newEnvPeople(t, socket, set, nil, nil)
}

// newEnvPeople is newEnvWith with people configured, each of them on
// route ops, and the service on clock (nil: the wall clock, Slack's own).
func newEnvPeople(t *testing.T, socket bool, set func(*slack.Options), people map[string]core.Person, clock core.Clock) *env {
	t.Helper()
	var names []string
	for name := range people {
		names = append(names, core.PersonPrefix+name)
	}
	return newEnvRoutes(t, socket, set, map[string]core.Route{
		"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: room}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {alice.ID, "role:" + group}},
			People:   names},
	}, people, clock)
}

// newEnvRoutes is newEnvPeople with the routes given.
func newEnvRoutes(t *testing.T, socket bool, set func(*slack.Options), routes map[string]core.Route, people map[string]core.Person, clock core.Clock) *env {
	t.Helper()
	svc, _ := coretest.Open(t, coretest.Options{Routes: routes, People: people, Clock: clock})
	fake := slackfake.New()
	for _, u := range []slackfake.User{alice, bob, mallory} {
		fake.AddUser(u)
	}
	fake.SetGroup(group, bob.ID)
	o := slack.Options{BotToken: "xoxb-test", SigningSecret: secret, APIURL: strings.TrimSuffix(fake.APIURL(), "/"), PingInterval: 5 * time.Second}
	if socket {
		o.AppToken = "xapp-test"
	}
	if set != nil {
		set(&o)
	}
	a, err := slack.New(svc, o)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Mount(mux)
	srv := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) })
	wg.Go(func() { _ = loops.Deliver(ctx, svc, a, loops.DeliverOptions{Block: 20 * time.Millisecond}) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		srv.Close()
		fake.Close()
	})
	return &env{t: t, fake: fake, svc: svc, a: a, srv: srv}
}

func (e *env) ask(in core.AskInput) *core.Question {
	e.t.Helper()
	in.Agent, in.RunID, in.Route = "agent", "run-1", "ops"
	if in.Reversibility == "" {
		in.Reversibility = core.Reversible
	}
	q, err := e.svc.Ask(e.t.Context(), in)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

// card waits until q's card is posted and recorded, and returns it.
func (e *env) card(id core.QuestionID) slackfake.Message {
	e.t.Helper()
	var m slackfake.Message
	ok := e.fake.WaitFor(wait, func() bool {
		q, err := e.svc.Get(e.t.Context(), id)
		if err != nil || len(q.Messages) == 0 {
			return false
		}
		var found bool
		m, found = e.fake.Message(q.Messages[0].Room, q.Messages[0].ID)
		return found
	})
	if !ok {
		e.t.Fatalf("no card for %s", id)
	}
	return m
}

func (e *env) until(what string, cond func() bool) {
	e.t.Helper()
	if !e.fake.WaitFor(wait, cond) {
		e.t.Fatalf("timed out waiting for %s", what)
	}
}

func (e *env) get(id core.QuestionID) *core.Question {
	e.t.Helper()
	q, err := e.svc.Get(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

// note waits for the n-th (0-based) private note to u and returns its text.
func (e *env) note(u slackfake.User, n int) string {
	e.t.Helper()
	var notes []slackfake.Ephemeral
	e.until("a private note to "+u.Name, func() bool {
		notes = notes[:0]
		for _, x := range e.fake.Ephemerals() {
			if x.User == u.ID {
				notes = append(notes, x)
			}
		}
		return len(notes) > n
	})
	return notes[n].PlainText()
}

func (e *env) notesTo(u slackfake.User) int {
	n := 0
	for _, x := range e.fake.Ephemerals() {
		if x.User == u.ID {
			n++
		}
	}
	return n
}

func button(t *testing.T, m slackfake.Message, action core.RefAction, item, option int) slackfake.Button {
	t.Helper()
	for _, b := range m.Buttons() {
		r, err := core.DecodeRef(b.Value)
		if err == nil && r.Action == action && r.Item == item && (action != core.RefOption || r.Option == option) {
			return b
		}
	}
	t.Fatalf("no %c button for item %d option %d", action, item, option)
	return slackfake.Button{}
}

func (e *env) click(u slackfake.User, m slackfake.Message, b slackfake.Button) int {
	e.t.Helper()
	status, _, err := slackfake.Click(e.srv.URL+slack.InteractivityPath, secret, slackfake.ClickPayload(u, m, b)).Send(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return status
}

func (e *env) reply(u slackfake.User, card slackfake.Message, text string, retries int) {
	e.t.Helper()
	body, _ := e.fake.ReplyEvent(e.fake.AddReply(card.Channel, card.TS, u.ID, text))
	for i := 0; i <= retries; i++ {
		req := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body)
		req.RetryNum = i
		if status, resp, err := req.Send(e.t.Context()); err != nil || status != 200 {
			e.t.Fatalf("event answered %d %q: %v", status, resp, err)
		}
	}
}

func decision() core.AskInput {
	return core.AskInput{Kind: core.KindDecision, Text: "Which database?", Options: []core.Option{
		{ID: "pg", Title: "PostgreSQL", Writeup: "Known.", Recommended: true},
		{ID: "ddb", Title: "DynamoDB", Writeup: "Scales."}}}
}

func form() core.AskInput {
	return core.AskInput{Kind: core.KindForm, Text: "Release plan", Items: []core.FormItem{
		{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}},
		{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
	}}
}

// TestHTTPVerification: url_verification is answered, and every request
// that is unsigned, wrongly signed or stale gets a 401 and changes nothing.
func TestHTTPVerification(t *testing.T) {
	e := newEnv(t, false)
	status, body, err := slackfake.Event(e.srv.URL+slack.EventsPath, secret, slackfake.URLVerification("chal-123")).Send(t.Context())
	if err != nil || status != 200 || body != "chal-123" {
		t.Fatalf("url_verification: %d %q %v", status, body, err)
	}
	q := e.ask(decision())
	card := e.card(q.ID)
	b := button(t, card, core.RefOption, -1, 0)
	payload := slackfake.ClickPayload(alice, card, b)
	for name, r := range map[string]slackfake.Request{
		"wrong secret": slackfake.Click(e.srv.URL+slack.InteractivityPath, "wrong", payload),
		"stale":        {URL: e.srv.URL + slack.InteractivityPath, Secret: secret, At: time.Now().Add(-6 * time.Minute), ContentType: "application/x-www-form-urlencoded", Body: slackfake.InteractionForm(payload)},
		"future":       {URL: e.srv.URL + slack.InteractivityPath, Secret: secret, At: time.Now().Add(6 * time.Minute), ContentType: "application/x-www-form-urlencoded", Body: slackfake.InteractionForm(payload)},
		"event forged": slackfake.Event(e.srv.URL+slack.EventsPath, "wrong", slackfake.URLVerification("x")),
	} {
		status, body, err := r.Send(t.Context())
		if err != nil || status != http.StatusUnauthorized {
			t.Errorf("%s: %d %v, want 401", name, status, err)
		}
		if !strings.Contains(body, `{"error":{"code":"forbidden","message":"invalid signature"}}`) {
			t.Errorf("%s: the refusal is not in the error shape: %q", name, body)
		}
	}
	// No signature headers at all.
	res, err := http.Post(e.srv.URL+slack.InteractivityPath, "application/x-www-form-urlencoded", strings.NewReader(string(slackfake.InteractionForm(payload))))
	if err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned: %v %v", res.StatusCode, err)
	}
	res.Body.Close()
	if got := e.get(q.ID); got.State != core.StateOpen {
		t.Fatalf("a refused request changed the question: %s", got.State)
	}
	evs, _ := e.svc.Events(t.Context(), 0, 100)
	for _, ev := range evs {
		if ev.Kind == core.EventRefused {
			t.Fatal("a refused request reached core")
		}
	}
}

// TestThreadReplies: a reply answers the form's first unanswered item; a
// retried event counts once; replies from strangers, from bots, at the top
// level or under someone else's message change nothing.
func TestThreadReplies(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(form())
	card := e.card(q.ID)

	e.reply(mallory, card, "Saturday", 0)
	e.until("the refusal", func() bool {
		evs, _ := e.svc.Events(t.Context(), 0, 100)
		return len(evs) > 0 && evs[len(evs)-1].Kind == core.EventRefused
	})
	// Nothing changes, and the stranger is told why, as after a click.
	if got := e.get(q.ID); len(got.Answers) != 0 {
		t.Fatalf("a stranger's reply changed %+v", got.Answers)
	}
	if note := e.note(mallory, 0); !strings.Contains(note, "not one of the people") {
		t.Fatalf("a stranger's reply was told %q", note)
	}

	// The same event three times (Slack retrying): one item answered.
	e.reply(alice, card, "Tuesday, after the freeze", 2)
	got := e.get(q.ID)
	if len(got.Answers) != 1 || got.Answers[0].ItemID != "day" || got.Answers[0].Text != "Tuesday, after the freeze" {
		t.Fatalf("answers after a retried reply: %+v", got.Answers)
	}
	if note := e.note(alice, 0); !strings.Contains(note, "Which day?") || !strings.Contains(note, "1/2") {
		t.Fatalf("note %q", note)
	}
	e.until("the progress edit", func() bool {
		m, _ := e.fake.Message(card.Channel, card.TS)
		return strings.Contains(m.PlainText(), "Answered 1/2") && len(m.Buttons()) == 3 // item 2's options and decline
	})

	// Our own post in the thread, and a bot's, are not answers.
	ours, _ := e.fake.ReplyEvent(slackfake.Message{Channel: card.Channel, TS: "1.000001", ThreadTS: card.TS, User: slackfake.BotUserID, Text: "reminder"})
	bot, _ := e.fake.ReplyEvent(slackfake.Message{Channel: card.Channel, TS: "1.000002", ThreadTS: card.TS, User: "U0OTHER", BotID: "B0OTHER", Text: "beep"})
	top, _ := e.fake.ReplyEvent(slackfake.Message{Channel: card.Channel, TS: "1.000003", ThreadTS: "", User: alice.ID, Text: "top level"})
	for _, body := range [][]byte{ours, bot, top} {
		if status, _, err := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body).Send(t.Context()); err != nil || status != 200 {
			t.Fatal(status, err)
		}
	}
	if got := e.get(q.ID); len(got.Answers) != 1 {
		t.Fatalf("a bot or top-level message answered: %+v", got.Answers)
	}

	// A thread under a post of ours that is no card: read once, then
	// cached (one under a person's message is not read at all).
	other := e.fake.AddReply(room, "", slackfake.BotUserID, "lunch?")
	before := e.fake.Calls("conversations.replies")
	for range 2 {
		e.reply(alice, other, "yes", 0)
	}
	if n := e.fake.Calls("conversations.replies") - before; n != 1 {
		t.Fatalf("conversations.replies called %d times for one thread", n)
	}

	e.reply(alice, card, "Short, please", 0)
	got = e.get(q.ID)
	if got.State != core.StateAnswered || len(got.Answers) != 2 || got.Answers[1].ItemID != "notes" {
		t.Fatalf("form after the second reply: %s %+v", got.State, got.Answers)
	}
	// A reply after the close is told the truth.
	e.reply(alice, card, "one more thing", 0)
	if note := e.note(alice, 2); !strings.Contains(note, "Already closed") {
		t.Fatalf("late reply note %q", note)
	}
}

// TestClicks: a group member decides through their group; a stranger is
// told they may not; decline works; a forged value is refused.
func TestClicks(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(decision())
	card := e.card(q.ID)
	if s := e.click(mallory, card, button(t, card, core.RefOption, -1, 0)); s != 200 {
		t.Fatalf("status %d", s)
	}
	if note := e.note(mallory, 0); !strings.Contains(note, "not one of the people") {
		t.Fatalf("stranger told %q", note)
	}
	forged := slackfake.Button{ActionID: "x", Value: "1o-9" + string(q.ID)}
	e.click(alice, card, forged)
	if note := e.note(alice, 0); !strings.Contains(note, "does not exist") {
		t.Fatalf("forged value told %q", note)
	}
	e.click(bob, card, button(t, card, core.RefOption, -1, 0))
	if note := e.note(bob, 0); !strings.Contains(note, "PostgreSQL") {
		t.Fatalf("group member told %q", note)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Decider.ID != bob.ID {
		t.Fatalf("after the group member's click: %s %+v", got.State, got.Resolution)
	}

	d := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop it?", Tool: "sql", Arguments: json.RawMessage(`{"q":"drop"}`)})
	dcard := e.card(d.ID)
	e.click(alice, dcard, button(t, dcard, core.RefDecline, -1, 0))
	if got := e.get(d.ID); got.State != core.StateDeclined {
		t.Fatalf("decline: %s", got.State)
	}
	e.until("the declined edit", func() bool {
		m, _ := e.fake.Message(dcard.Channel, dcard.TS)
		return strings.Contains(m.PlainText(), "Declined by Alice") && len(m.Buttons()) == 0
	})
}

// TestGroupNotReadIsNoRefusal: a click from a group member whose group
// Slack would not list just then is not taken for a stranger's: the
// clicker is told to try again, no refusal is recorded, and the next
// click counts. Before, they were told they may not answer, and the log
// said so. A decider named by their own id is not held up by it.
func TestGroupNotReadIsNoRefusal(t *testing.T) {
	e := newEnv(t, false)
	d := e.ask(decision())
	dcard := e.card(d.ID)
	e.fake.FailNext("usergroups.users.list", slackfake.Failure{Error: "internal_error"})
	e.click(alice, dcard, button(t, dcard, core.RefOption, -1, 0))
	if got := e.get(d.ID); got.State != core.StateAnswered || got.Resolution.Decider.ID != alice.ID {
		t.Fatalf("alice's click while the group could not be read: %s %+v", got.State, got.Resolution)
	}
	q := e.ask(decision())
	card := e.card(q.ID)
	e.fake.FailNext("usergroups.users.list", slackfake.Failure{Error: "internal_error"})
	e.click(bob, card, button(t, card, core.RefOption, -1, 0))
	if note := e.note(bob, 0); !strings.Contains(note, "try again") {
		t.Fatalf("the group member was told %q", note)
	}
	for _, ev := range coretest.EventsOf(t, e.svc, q.ID) {
		if ev.Kind == core.EventRefused {
			t.Fatalf("a refusal was recorded: %+v", ev)
		}
	}
	e.click(bob, card, button(t, card, core.RefOption, -1, 0))
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Decider.ID != bob.ID {
		t.Fatalf("the next click: %s %+v", got.State, got.Resolution)
	}
}

// TestCourierErrors: a rate limit becomes core.RetryAfter with Slack's
// delay; a missing or archived channel, or a missing message, is
// permanent.
func TestCourierErrors(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(decision())
	e.card(q.ID)
	q = e.get(q.ID)

	e.fake.FailNext("chat.postMessage", slackfake.Failure{RetryAfter: 7})
	_, err := e.a.Post(t.Context(), q, core.MessageRef{Room: "C0OTHER", Kind: core.DeliverPost})
	var ra *core.RetryAfter
	if !errors.As(err, &ra) || ra.After != 7*time.Second {
		t.Fatalf("rate limited post: %v", err)
	}
	var rl *goslack.RateLimitedError
	if !errors.As(err, &rl) {
		t.Fatalf("the SDK's error is not kept: %v", err)
	}
	for _, code := range []string{"channel_not_found", "not_in_channel", "is_archived"} {
		e.fake.SetChannelError("C0GONE", code)
		_, err := e.a.Post(t.Context(), q, core.MessageRef{Room: "C0GONE", Kind: core.DeliverPost})
		var perm *core.Permanent
		if !errors.As(err, &perm) || !strings.Contains(err.Error(), code) {
			t.Fatalf("%s: %v", code, err)
		}
	}
	err = e.a.Update(t.Context(), q, core.MessageRef{Surface: core.SurfaceSlack, Room: room, ID: "9.000009"})
	var perm *core.Permanent
	if !errors.As(err, &perm) {
		t.Fatalf("update of a missing message: %v", err)
	}
	e.fake.FailNext("chat.update", slackfake.Failure{Error: "internal_error"})
	err = e.a.Update(t.Context(), q, q.Messages[0])
	if err == nil || errors.As(err, &perm) || errors.As(err, &ra) {
		t.Fatalf("a passing failure must be retried: %v", err)
	}
}

// TestRemindAndDigest: a reminder goes in the card's thread (broadcast),
// or stands alone where there is no card; a digest lists what is open.
func TestRemindAndDigest(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(decision())
	posted := e.card(q.ID)
	q = e.get(q.ID)
	if err := e.a.Remind(t.Context(), q, room); err != nil {
		t.Fatal(err)
	}
	if err := e.a.Remind(t.Context(), q, "C0ELSE"); err != nil {
		t.Fatal(err)
	}
	if err := e.a.Digest(t.Context(), core.Digest{From: q.CreatedAt, To: q.CreatedAt.Add(time.Hour), Asked: []*core.Question{q}, Open: []*core.Question{q}}, room); err != nil {
		t.Fatal(err)
	}
	var inThread, alone, digest bool
	for _, m := range e.fake.Messages() {
		text := m.PlainText()
		switch {
		case strings.Contains(text, card.ReminderHeading) && m.ThreadTS == posted.TS && m.Broadcast:
			inThread = true
		case strings.Contains(text, card.ReminderHeading) && m.Channel == "C0ELSE" && m.ThreadTS == "" && strings.Contains(text, string(q.ID)):
			alone = true
		case strings.Contains(text, card.DigestHeading) && strings.Contains(text, string(q.ID)) && strings.Contains(text, "1 still open"):
			digest = true
		}
	}
	if !inThread || !alone || !digest {
		t.Fatalf("reminder in thread %v, alone %v, digest %v: %+v", inThread, alone, digest, e.fake.Messages())
	}
}

func TestNewChecksOptions(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	if _, err := slack.New(svc, slack.Options{BotToken: "xoxb"}); err == nil {
		t.Fatal("no transport accepted")
	}
	if _, err := slack.New(svc, slack.Options{SigningSecret: "s"}); err == nil {
		t.Fatal("no bot token accepted")
	}
	a, err := slack.New(svc, slack.Options{BotToken: "xoxb", SigningSecret: "s"})
	if err != nil || a.Surface() != core.SurfaceSlack {
		t.Fatal(err)
	}
}
