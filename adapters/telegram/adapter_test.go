package telegram

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"golang.org/x/time/rate"
)

const (
	token  = "123456:TEST-token_abc"
	secret = "s3cret-token_for-tests"
	room   = int64(-1001234567890)
)

var (
	userAlice   = tgbotapi.User{ID: 259760855, FirstName: "Alice", LastName: "Ops", UserName: "alice"}
	userBob     = tgbotapi.User{ID: 311111111, FirstName: "Bob"}
	userMallory = tgbotapi.User{ID: 666, FirstName: "Mallory"}
)

// env is one adapter wired to a real core on the embedded store and to
// the fake Bot API, in webhook mode unless a KV is given.
type env struct {
	t     *testing.T
	svc   *core.Service
	fake  *telegramfake.Server
	a     *Adapter
	store core.Store
	// budget, when set, is the shared budget the outbox's drain spends.
	budget core.Budget
}

var fastLimits = Limits{PerChat: rate.Inf, Global: rate.Inf, PerGroup: rate.Inf}

func newEnv(t *testing.T, kv PollState) *env {
	t.Helper()
	return newEnvOn(t, kv, coretest.OpenStore(t))
}

// newEnvOn is newEnv with its service over st.
func newEnvOn(t *testing.T, kv PollState, st core.Store) *env {
	t.Helper()
	return newEnvIn(t, kv, st, strconv.FormatInt(room, 10))
}

// run starts Run and the outbox loop until the test ends.
func (e *env) run() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); e.a.Run(ctx) }()
	go func() {
		defer wg.Done()
		loops.Deliver(ctx, e.svc, e.a, loops.DeliverOptions{Block: 50 * time.Millisecond, MinIdle: time.Second, Budget: e.budget})
	}()
	e.t.Cleanup(func() { cancel(); wg.Wait() })
	if e.a.opts.WebhookSecret != "" && !e.fake.Wait(5*time.Second, func() bool { u, _, _ := e.fake.Webhook(); return u != "" }) {
		e.t.Fatal("the webhook was never registered")
	}
}

func (e *env) ask(in core.AskInput) *core.Question {
	e.t.Helper()
	in.Route, in.Agent, in.RunID = "ops", "deploy-bot", "run-1"
	if in.Reversibility == "" {
		in.Reversibility = core.HardToReverse
	}
	q, err := e.svc.Ask(e.t.Context(), in)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

func decisionInput() core.AskInput {
	return core.AskInput{Kind: core.KindDecision, Text: "Which database?", Options: []core.Option{
		{ID: "pg", Title: "PostgreSQL", Writeup: "Mature.", Recommended: true},
		{ID: "sqlite", Title: "SQLite", Writeup: "Simple."},
	}}
}

// releaseForm is a form of two items, of two options each.
func releaseForm() core.AskInput {
	return core.AskInput{Kind: core.KindForm, Text: "Release", Items: []core.FormItem{
		{ID: "channel", Question: "Channel?", Options: []core.FormOption{{ID: "beta", Label: "Beta"}, {ID: "stable", Label: "Stable"}}},
		{ID: "tone", Question: "Tone?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "full", Label: "Full"}}},
	}}
}

// card waits for q's card to satisfy cond. A card counts once core has
// recorded it, as a person sees it only after it is posted (a tap racing
// the record would leave a form's card without progress: see the notes).
func (e *env) card(id core.QuestionID, cond func(telegramfake.Message) bool) telegramfake.Message {
	e.t.Helper()
	var got telegramfake.Message
	ok := e.fake.Wait(10*time.Second, func() bool {
		for _, m := range e.fake.Messages(room) {
			if m.Keyboarded && e.isCard(m, id) {
				got = m
				return cond(m)
			}
		}
		return false
	})
	if !ok {
		e.t.Fatalf("card of %s: last seen %+v", id, got)
	}
	return got
}

func (e *env) isCard(m telegramfake.Message, id core.QuestionID) bool {
	q, err := e.svc.Get(e.t.Context(), id)
	if err != nil {
		return false
	}
	for _, c := range q.Messages {
		if c.ID == strconv.Itoa(m.ID) {
			return true
		}
	}
	return false
}

func buttonsData(m telegramfake.Message) string {
	var b strings.Builder
	for _, x := range m.Buttons() {
		b.WriteString(x.Data + " ")
	}
	return b.String()
}

func findButton(t *testing.T, m telegramfake.Message, label string) telegramfake.Button {
	t.Helper()
	for _, b := range m.Buttons() {
		if strings.Contains(b.Text, label) {
			return b
		}
	}
	t.Fatalf("no button %q on %+v", label, m.Buttons())
	return telegramfake.Button{}
}

func (e *env) click(u tgbotapi.User, m telegramfake.Message, b telegramfake.Button) string {
	e.t.Helper()
	note, err := e.fake.Click(u, m.ChatID, m.ID, b.Data, 10*time.Second)
	if err != nil {
		e.t.Fatal(err)
	}
	return note
}

func (e *env) wait(id core.QuestionID, cond func(*core.Question) bool) *core.Question {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		q, err := e.svc.Get(e.t.Context(), id)
		if err != nil {
			e.t.Fatal(err)
		}
		if cond(q) {
			return q
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("question %s never reached the wanted state: %+v", id, q)
		}
		ch, stop := e.store.Watch(id)
		select {
		case <-ch:
		case <-time.After(100 * time.Millisecond):
		}
		stop()
	}
}

func (e *env) events(id core.QuestionID, kind core.EventKind) []core.Event {
	e.t.Helper()
	var out []core.Event
	for _, x := range coretest.EventsOf(e.t, e.svc, id) {
		if x.Kind == kind {
			out = append(out, x)
		}
	}
	return out
}

func TestDecisionClickClosesAndEditsTheCard(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	if _, sec, allowed := e.fake.Webhook(); sec != secret || allowed != `["message","edited_message","callback_query"]` {
		t.Fatalf("setWebhook got secret %q allowed %q", sec, allowed)
	}
	q := e.ask(decisionInput())
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) == 3 })
	if !strings.Contains(c.Text, card.HardToReverseMarker) || !strings.Contains(c.Text, "Which database?") {
		t.Fatalf("card text %q", c.Text)
	}
	if note := e.click(userMallory, c, findButton(t, c, "SQLite")); !strings.Contains(note, "not one of the people") {
		t.Fatalf("stranger was told %q", note)
	}
	if len(e.events(q.ID, core.EventRefused)) != 1 {
		t.Fatal("the stranger's tap was not recorded as refused")
	}
	if note := e.click(userAlice, c, findButton(t, c, "SQLite")); note != "Recorded: SQLite" {
		t.Fatalf("decider was told %q", note)
	}
	got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	if got.Resolution.OptionID != "sqlite" || got.Resolution.Decider.ID != "259760855" || got.Resolution.Decider.Name != "Alice Ops" {
		t.Fatalf("resolution %+v", got.Resolution)
	}
	edited := e.card(q.ID, func(m telegramfake.Message) bool { return m.Edits > 0 })
	if len(edited.Buttons()) != 0 || !strings.Contains(edited.Text, "Answered by Alice Ops") || !strings.Contains(edited.Text, "Chosen: SQLite") {
		t.Fatalf("edited card %+v", edited)
	}
	// A late tap on the old card is told who won.
	if note := e.click(userBob, c, findButton(t, c, "PostgreSQL")); !strings.HasPrefix(note, "Already closed. Answered by Alice Ops") || len(note) > MaxCallbackText*4 {
		t.Fatalf("late tap was told %q", note)
	}
}

func TestClarificationReplyToPrompt(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	prompt := e.prompt(nil)
	if prompt.ForceReply == nil || prompt.ReplyTo == 0 || !strings.HasSuffix(prompt.Text, "ref: 1t-0"+string(q.ID)) {
		t.Fatalf("prompt %+v", prompt)
	}
	// A user quoting the ref in their own message is not a prompt: ignored.
	if _, err := e.fake.Reply(userAlice, room, 0, "ref: 1t-0"+string(q.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.Reply(userMallory, room, prompt.ID, "us-east-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.Reply(userAlice, room, prompt.ID, "eu-west-1 <please>"); err != nil {
		t.Fatal(err)
	}
	got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	if got.Resolution.Answer != "eu-west-1 <please>" || got.Resolution.Decider.ID != "259760855" {
		t.Fatalf("resolution %+v", got.Resolution)
	}
	if len(e.events(q.ID, core.EventRefused)) != 1 {
		t.Fatal("the stranger's reply was not recorded as refused")
	}
	card := e.card(q.ID, func(m telegramfake.Message) bool { return m.Edits > 0 })
	if !strings.Contains(card.Text, "Answer: eu-west-1 <please>") || len(card.Buttons()) != 0 {
		t.Fatalf("card after the reply %+v", card)
	}
	// A reply after the close is told the truth, as a reply.
	before := len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userBob, room, card.ID, "too late"); err != nil {
		t.Fatal(err)
	}
	if got := e.lastText(before); !strings.HasPrefix(got, "Already closed. Answered by Alice Ops") {
		t.Fatalf("late reply was told %q", got)
	}
}

// failingCommits is a store whose commits fail while fail is set, as one
// failing over does.
type failingCommits struct {
	core.Store
	fail atomic.Bool
}

func (s *failingCommits) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	if s.fail.Load() {
		return nil, errors.New("failingCommits: the store is failing over")
	}
	return s.Store.Commit(ctx, c)
}

// prompt waits for a ForceReply prompt in the room that satisfies cond
// (nil: any) and returns it, or the zero Message if none came.
func (e *env) prompt(cond func(telegramfake.Message) bool) telegramfake.Message {
	e.t.Helper()
	var got telegramfake.Message
	e.fake.Wait(10*time.Second, func() bool {
		for _, m := range e.fake.Messages(room) {
			if m.ForceReply != nil && (cond == nil || cond(m)) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// lastText is the newest message's text in the room, once there are more
// than before.
func (e *env) lastText(before int) string {
	e.t.Helper()
	e.fake.Wait(5*time.Second, func() bool { return len(e.fake.Messages(room)) > before })
	msgs := e.fake.Messages(room)
	return msgs[len(msgs)-1].Text
}

// TestReplyNotRecordedIsTold: a reply to a prompt that the store could
// not record is told to try again, as a reply; Telegram sends an update
// once, and before, the reply was lost with nothing said.
func TestReplyNotRecordedIsTold(t *testing.T) {
	st := &failingCommits{Store: coretest.OpenStore(t)}
	e := newEnvOn(t, nil, st)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	prompt := e.prompt(nil)
	st.fail.Store(true)
	before := len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userAlice, room, prompt.ID, "eu-west-1"); err != nil {
		t.Fatal(err)
	}
	if got := e.lastText(before); !strings.Contains(got, "try again") {
		t.Fatalf("the replier was told %q", got)
	}
	st.fail.Store(false)
	if q, err := e.svc.Get(t.Context(), q.ID); err != nil || !q.Open() {
		t.Fatal("a reply that failed changed the question")
	}
}

// TestRefusalNoteMentionsNobody: a note to a late replier quotes the
// outcome, which may hold an agent's words; an @name in them does not
// mention anyone, as on cards. Before, the note escaped HTML alone, and
// an agent's cancel reason pinged whoever it named.
func TestRefusalNoteMentionsNobody(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	c := e.card(q.ID, func(telegramfake.Message) bool { return true })
	if _, err := e.svc.Cancel(t.Context(), core.CancelInput{QuestionID: q.ID, By: core.Decider{Surface: core.SurfaceAgent, ID: "deploy-bot"},
		Owner: "deploy-bot", Reason: "superseded, ask @cto_alice"}); err != nil {
		t.Fatal(err)
	}
	before := len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userBob, room, c.ID, "eu-west-1"); err != nil {
		t.Fatal(err)
	}
	if got := e.lastText(before); !strings.Contains(got, "＠cto_alice") || strings.Contains(got, "@cto_alice") {
		t.Fatalf("the late replier was told %q", got)
	}
}

// TestStrangerTapOnReplyIsRefusedByCore: a "Reply to answer" tap from
// someone who may not answer goes through the chokepoint, so it is told
// the truth and recorded as refused, like any other refused click.
func TestStrangerTapOnReplyIsRefusedByCore(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	c := e.card(q.ID, func(telegramfake.Message) bool { return true })
	note := e.click(userMallory, c, findButton(t, c, "Reply to answer"))
	if !strings.Contains(note, "not one of the people") {
		t.Fatalf("the stranger was told %q", note)
	}
	if len(e.events(q.ID, core.EventRefused)) != 1 {
		t.Fatal("the stranger's tap was not recorded as refused")
	}
}

func TestFormOptionThenSomethingElse(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(releaseForm())
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	if note := e.click(userAlice, c, findButton(t, c, "1. Beta")); note != "Recorded (Answered 1/2): Channel? → Beta" {
		t.Fatalf("first item: %q", note)
	}
	c = e.card(q.ID, func(m telegramfake.Message) bool { return strings.Contains(m.Text, "Answered 1/2") })
	if strings.Contains(buttonsData(c), "1o0") {
		t.Fatalf("the answered item's buttons stayed: %+v", c.Buttons())
	}
	if note := e.click(userBob, c, findButton(t, c, "2. Something else")); !strings.Contains(note, "Reply to the prompt") {
		t.Fatalf("something else: %q", note)
	}
	prompt := e.prompt(func(m telegramfake.Message) bool {
		return m.ForceReply.Selective && strings.Contains(m.Text, "Tone?")
	})
	if prompt.ID == 0 || prompt.ReplyTo != c.ID || !strings.HasPrefix(prompt.Text, "Bob, reply") {
		t.Fatalf("prompt %+v", prompt)
	}
	if _, err := e.fake.Reply(userBob, room, prompt.ID, "cheerful"); err != nil {
		t.Fatal(err)
	}
	got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	if len(got.Answers) != 2 || got.Answers[1].Text != "cheerful" || got.Answers[1].Decider.ID != "311111111" {
		t.Fatalf("answers %+v", got.Answers)
	}
	e.card(q.ID, func(m telegramfake.Message) bool {
		return len(m.Buttons()) == 0 && strings.Contains(m.Text, "Tone?: cheerful")
	})
}

func TestWebhookSecretAndDuplicates(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the table?", Tool: "sql", Arguments: []byte(`{"q":"DROP TABLE t"}`)})
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) == 3 }) // approve, deny, decline
	approve := findButton(t, c, "Approve")
	for _, forged := range []string{"", "wrong", secret + "x"} {
		u, qid, err := e.fake.CallbackUpdate(userAlice, room, c.ID, approve.Data)
		if err != nil {
			t.Fatal(err)
		}
		status, err := e.fake.DeliverWithSecret(u, forged)
		if err != nil || status != http.StatusUnauthorized {
			t.Fatalf("secret %q: status %d, %v", forged, status, err)
		}
		if e.fake.Answered(qid) {
			t.Fatal("a forged update was acted on")
		}
	}
	if got, _ := e.svc.Get(t.Context(), q.ID); !got.Open() {
		t.Fatal("a forged update changed the question")
	}
	// The same update delivered twice is handled once.
	u, qid, err := e.fake.CallbackUpdate(userAlice, room, c.ID, approve.Data)
	if err != nil {
		t.Fatal(err)
	}
	u["update_id"] = 990001
	if status, err := e.fake.Deliver(u); err != nil || status != http.StatusOK {
		t.Fatalf("first delivery: %d %v", status, err)
	}
	if note, err := e.fake.CallbackAnswer(qid, time.Second); err != nil || note != "Recorded: Approved" {
		t.Fatalf("approve: %q %v", note, err)
	}
	if status, err := e.fake.Deliver(u); err != nil || status != http.StatusOK {
		t.Fatalf("second delivery: %d %v", status, err)
	}
	n := 0
	for _, call := range e.fake.Calls() {
		if call.Method == "answerCallbackQuery" && call.Form.Get("callback_query_id") == qid {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the repeated update was answered %d times", n)
	}
	if got := len(e.events(q.ID, core.EventRefused)); got != 0 {
		t.Fatalf("the repeated update reached core: %d refusals", got)
	}
}

func TestUnknownButtonIsAnsweredTruthfully(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(decisionInput())
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	for _, data := range []string{"tasks-settings", core.Ref{QuestionID: core.NewID(0), Item: -1, Action: core.RefOption}.Encode()} {
		if note := e.click(userAlice, c, telegramfake.Button{Data: data}); note != "This question no longer exists." {
			t.Fatalf("%q: told %q", data, note)
		}
	}
}
