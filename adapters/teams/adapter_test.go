package teams_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

const (
	appID    = "00000000-0000-0000-0000-0000000000b0"
	secret   = "app-password~secret"
	channel  = "19:ops0000000000000000000000000000@thread.tacv2"
	aliceAAD = "aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa"
	bobAAD   = "bbbbbbbb-2222-4222-8222-bbbbbbbbbbbb"
)

var (
	alice   = teamsfake.User{ID: "29:1alice", AAD: aliceAAD, Name: "Alice Ops"}
	bob     = teamsfake.User{ID: "29:1bob", AAD: bobAAD, Name: "Bob Builder"}
	mallory = teamsfake.User{ID: "29:1mallory", AAD: "cccccccc-3333-4333-8333-cccccccccccc", Name: "Mallory"}
)

type env struct {
	t    *testing.T
	svc  *core.Service
	fake *teamsfake.Server
	a    *teams.Adapter
	web  *httptest.Server // the adapter's endpoint
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil, nil)
}

// newEnvWith is newEnv with the adapter's values the store's as kv
// makes them (nil: the store's as they are), and the service and the
// store on clock (nil: the wall clock, Teams' own), so that a tie's
// lifetime passes as the clock moves. Route ops escalates to "oncall",
// in the same channel.
func newEnvWith(t *testing.T, kv func(core.Values) core.Values, clock core.Clock) *env {
	t.Helper()
	return newEnvOn(t, nil, kv, clock)
}

// newEnvOn is newEnvWith with the service's store as wrap makes it (nil:
// the store as it is).
func newEnvOn(t *testing.T, wrap func(core.Store) core.Store, kv func(core.Values) core.Values, clock core.Clock) *env {
	t.Helper()
	deciders := map[core.Surface][]string{core.SurfaceTeams: {aliceAAD, bobAAD}, core.SurfaceAPI: {"*"}}
	var now func() time.Time // the store's clock: nil is the wall clock
	if clock != nil {
		now = clock.Now
	}
	var st core.Store = coretest.OpenStoreOn(t, now)
	if wrap != nil {
		st = wrap(st)
	}
	svc := coretest.Service(t, st, coretest.Options{Clock: clock, Routes: map[string]core.Route{
		"ops":      {Rooms: []core.Room{{Surface: core.SurfaceTeams, ID: channel}}, Deciders: deciders, EscalateTo: "oncall"},
		"oncall":   {Rooms: []core.Room{{Surface: core.SurfaceTeams, ID: channel}}, Deciders: deciders},
		"alice-dm": {Rooms: []core.Room{{Surface: core.SurfaceTeams, ID: core.DMRoom(aliceAAD)}}, Deciders: deciders},
	}})
	fake := teamsfake.Start(t, appID, secret)
	values := svc.Values()
	if kv != nil {
		values = kv(values)
	}
	a, err := teams.New(svc, teams.Options{AppID: appID, AppPassword: secret, TenantID: teamsfake.Tenant,
		TokenURL: fake.TokenURL(), ServiceURL: fake.URL(), OpenIDURL: fake.OpenIDURL(), KV: values, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Mount(mux)
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	fake.SetTarget(web.URL + teams.MessagesPath)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) })
	wg.Go(func() {
		loops.Deliver(ctx, svc, a, loops.DeliverOptions{Block: 50 * time.Millisecond, MinIdle: time.Second, RetryWait: 10 * time.Millisecond})
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return &env{t: t, svc: svc, fake: fake, a: a, web: web}
}

func (e *env) ask(in core.AskInput) *core.Question {
	e.t.Helper()
	in.Agent, in.RunID = "deploy-bot", "run-1"
	if in.Route == "" {
		in.Route = "ops"
	}
	if in.Reversibility == "" {
		in.Reversibility = core.HardToReverse
	}
	q, err := e.svc.Ask(e.t.Context(), in)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

// card waits for the question's card in the channel, once the question
// has recorded it (as people see it only once posted), to satisfy cond.
func (e *env) card(id core.QuestionID, cond func(teamsfake.Message) bool) teamsfake.Message {
	e.t.Helper()
	var last teamsfake.Message
	ok := e.fake.Wait(10*time.Second, func() bool {
		q, err := e.svc.Get(e.t.Context(), id)
		if err != nil || len(q.Messages) == 0 {
			return false
		}
		for _, m := range e.fake.Messages() {
			if m.Channel == channel && m.ID == m.Root && m.ID == q.Messages[0].ID {
				last = m
				return cond == nil || cond(m)
			}
		}
		return false
	})
	if !ok {
		e.t.Fatalf("card of %s never satisfied the condition; last %+v", id, last)
	}
	return last
}

// toldPrivately waits until u is told, in their personal chat, a note
// holding words.
func (e *env) toldPrivately(u teamsfake.User, words string) bool {
	return e.fake.Wait(5*time.Second, func() bool {
		for _, x := range e.fake.Messages() {
			if x.Conversation == teamsfake.PersonalChat(u.ID) && strings.Contains(x.Text, words) {
				return true
			}
		}
		return false
	})
}

func (e *env) get(id core.QuestionID) *core.Question {
	e.t.Helper()
	q, err := e.svc.Get(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

// action is the data of the card's action titled title.
func action(t *testing.T, m teamsfake.Message, title string) map[string]any {
	t.Helper()
	var card struct{ Body []map[string]any }
	if err := json.Unmarshal(m.Card, &card); err != nil {
		t.Fatal(err)
	}
	for _, el := range card.Body {
		if el["type"] != "ActionSet" {
			continue
		}
		for _, x := range el["actions"].([]any) {
			a := x.(map[string]any)
			if a["title"] == title {
				return a["data"].(map[string]any)
			}
		}
	}
	t.Fatalf("no action %q on the card:\n%s", title, m.Card)
	return nil
}

func (e *env) execute(u teamsfake.User, m teamsfake.Message, data map[string]any) string {
	e.t.Helper()
	status, body, err := e.fake.Deliver(e.fake.ExecuteActivity(u, m, teams.Verb, data), "")
	if err != nil || status != http.StatusOK {
		e.t.Fatalf("invoke: %d %v %s", status, err, body)
	}
	note, err := teamsfake.InvokeNote(body)
	if err != nil {
		e.t.Fatal(err)
	}
	return note
}

// The Teams case: the card is posted as a new thread in the
// channel, an approver's click is answered privately, and the card is
// updated in place with the outcome, its actions gone; a second click
// is told who closed it.
func TestApproveUpdatesTheCardInPlace(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the staging tables?", Tool: "sql.exec", Arguments: []byte(`{"sql":"DROP TABLE t"}`)})
	m := e.card(q.ID, nil)
	approve := action(t, m, card.LabelApprove)
	if note := e.execute(alice, m, approve); note != "Recorded: Approved" {
		t.Fatalf("told %q", note)
	}
	got := e.get(q.ID)
	if got.State != core.StateAnswered || got.Resolution.Decider.Surface != core.SurfaceTeams || got.Resolution.Decider.ID != aliceAAD {
		t.Fatalf("recorded %s %+v", got.State, got.Resolution)
	}
	m = e.card(q.ID, func(m teamsfake.Message) bool { return m.Updates > 0 && strings.Contains(string(m.Card), "Alice Ops") })
	if strings.Contains(string(m.Card), "Action.Execute") {
		t.Fatalf("the closed card keeps its actions:\n%s", m.Card)
	}
	if note := e.execute(bob, m, approve); !strings.Contains(note, "Already") || !strings.Contains(note, "Alice Ops") {
		t.Fatalf("the loser was told %q", note)
	}
}

// TestForgedTokensChangeNothing: every token Microsoft's rules refuse is
// a 401, and the click behind it records nothing.
func TestForgedTokensChangeNothing(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)})
	m := e.card(q.ID, nil)
	act := e.fake.ExecuteActivity(alice, m, teams.Verb, action(t, m, card.LabelApprove))
	other, err := teamsfake.OtherKey()
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{
		"none":            "-",
		"another key":     e.fake.Sign(teamsfake.Token{Key: other}),
		"expired":         e.fake.Sign(teamsfake.Token{Expires: time.Now().Add(-10 * time.Minute), NotBefore: time.Now().Add(-time.Hour)}),
		"not yet valid":   e.fake.Sign(teamsfake.Token{NotBefore: time.Now().Add(10 * time.Minute)}),
		"another bot":     e.fake.Sign(teamsfake.Token{Audience: "11111111-0000-0000-0000-000000000000"}),
		"another issuer":  e.fake.Sign(teamsfake.Token{Issuer: "https://sts.windows.net/" + teamsfake.Tenant + "/"}),
		"another service": e.fake.Sign(teamsfake.Token{ServiceURL: "https://smba.attacker.example/teams/"}),
	} {
		if tok == "-" {
			tok = "not.a.jwt"
		}
		status, _, err := e.fake.Deliver(act, tok)
		if err != nil || status != http.StatusUnauthorized {
			t.Errorf("%s: %d %v; want 401", name, status, err)
		}
	}
	// No token, and a body that is no activity: the token is checked
	// first, so it is a 401 and the body is never parsed (before, 400).
	noToken, err := http.Post(e.web.URL+teams.MessagesPath, "application/json", strings.NewReader("not json"))
	if err != nil {
		t.Fatal(err)
	}
	noToken.Body.Close()
	if noToken.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token, no activity: %d; want 401", noToken.StatusCode)
	}
	// A genuine token on an activity from a channel its key is not
	// endorsed for; from another channel it is endorsed for (Web Chat,
	// Direct Line, whose users set their own from); from another tenant.
	// Before, the last two counted, as the person their from named.
	for name, change := range map[string]func(map[string]any){
		"a channel the key is not endorsed for": func(a map[string]any) { a["channelId"] = "skype" },
		"web chat":                              func(a map[string]any) { a["channelId"] = "webchat" },
		"direct line":                           func(a map[string]any) { a["channelId"] = "directline" },
		"another tenant": func(a map[string]any) {
			a["conversation"].(map[string]any)["tenantId"] = "11111111-2222-3333-4444-555555555555"
		},
		"another tenant in the channel data": func(a map[string]any) {
			a["channelData"] = map[string]any{"tenant": map[string]string{"id": "11111111-2222-3333-4444-555555555555"}}
		},
	} {
		other := e.fake.ExecuteActivity(alice, m, teams.Verb, action(t, m, card.LabelApprove))
		change(other)
		if status, _, err := e.fake.Deliver(other, ""); err != nil || status != http.StatusUnauthorized {
			t.Errorf("%s: %d %v; want 401", name, status, err)
		}
	}
	if got := e.get(q.ID); got.State != core.StateOpen {
		t.Fatalf("a refused activity changed the question: %s", got.State)
	}
	// The same activity with the Bot Connector's own token counts.
	if note := e.execute(alice, m, action(t, m, card.LabelApprove)); note != "Recorded: Approved" {
		t.Fatalf("told %q", note)
	}
}

// TestThreadReplyAnswers: a reply in a clarification's thread is the
// answer; a reply elsewhere is nothing.
func TestThreadReplyAnswers(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible})
	m := e.card(q.ID, nil)
	if status, _, err := e.fake.Deliver(e.fake.ReplyActivity(alice, channel+";messageid=999", "eu-west-1"), ""); err != nil || status != http.StatusOK {
		t.Fatalf("reply elsewhere: %d %v", status, err)
	}
	if e.get(q.ID).State != core.StateOpen {
		t.Fatal("a reply in another thread answered")
	}
	reply := e.fake.ReplyActivity(alice, m.Conversation, "<at>askbridge</at> eu-west-1")
	reply["entities"] = []any{map[string]any{"type": "mention", "text": "<at>askbridge</at>", "mentioned": map[string]string{"id": "28:" + appID, "name": "askbridge"}}}
	if status, _, err := e.fake.Deliver(reply, ""); err != nil || status != http.StatusOK {
		t.Fatalf("reply: %d %v", status, err)
	}
	got := e.get(q.ID)
	if got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("recorded %s %+v", got.State, got.Resolution)
	}
}

// TestThreadReplyWithFileIsTold: a reply in a clarification's thread that
// shares a file is not recorded, since only its words would reach the
// agent and not the file they point at, and its writer is told privately
// to reply with text alone; before, its words were recorded as the answer
// and the file dropped with nothing said. A text reply then counts.
func TestThreadReplyWithFileIsTold(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Why did the deploy fail?", Reversibility: core.Reversible})
	m := e.card(q.ID, nil)
	if status, _, err := e.fake.Deliver(e.fake.FileReplyActivity(alice, m.Conversation, "see the attached log", "deploy.log"), ""); err != nil || status != http.StatusOK {
		t.Fatalf("reply: %d %v", status, err)
	}
	if !e.toldPrivately(alice, "Only text can be recorded") {
		t.Fatalf("the replier was told nothing; the question is %s", e.get(q.ID).State)
	}
	if got := e.get(q.ID); got.State != core.StateOpen {
		t.Fatalf("the reply sharing a file changed the question: %s %+v", got.State, got.Resolution)
	}
	if status, _, err := e.fake.Deliver(e.fake.ReplyActivity(alice, m.Conversation, "the disk was full"), ""); err != nil || status != http.StatusOK {
		t.Fatalf("reply: %d %v", status, err)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "the disk was full" {
		t.Fatalf("the text reply: %s %+v", got.State, got.Resolution)
	}
}

// readHook is the store's values with hook run before each read; the
// hook's error, if any, is the read's, as a store's that went away.
type readHook struct {
	core.Values
	hook atomic.Pointer[func() error]
}

func (r *readHook) Value(ctx context.Context, key string) (string, error) {
	if h := r.hook.Load(); h != nil {
		if err := (*h)(); err != nil {
			return "", err
		}
	}
	return r.Values.Value(ctx, key)
}

// TestThreadReplyNotReadIsTold: a reply in a card's thread that cannot
// be tied to its question (the store failing) is not lost in silence:
// the replier is told privately to try again, as a refused reply is.
// Before, it was dropped with nothing said, and the replier waited on a
// card that never changed.
func TestThreadReplyNotReadIsTold(t *testing.T) {
	kv := &readHook{}
	e := newEnvWith(t, func(v core.Values) core.Values { kv.Values = v; return kv }, nil)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible})
	m := e.card(q.ID, nil)
	gone := func() error { return core.Internal("value", errors.New("unreadable: the store is gone")) }
	kv.hook.Store(&gone)
	if status, _, err := e.fake.Deliver(e.fake.ReplyActivity(alice, m.Conversation, "eu-west-1"), ""); err != nil || status != http.StatusOK {
		t.Fatalf("reply: %d %v", status, err)
	}
	if !e.toldPrivately(alice, "try again") {
		t.Fatalf("the replier was told nothing (%d messages)", len(e.fake.Messages()))
	}
	if e.get(q.ID).State != core.StateOpen {
		t.Fatal("the question changed")
	}
}

// TestSubmitFallbackTellsPrivately: a client without universal actions
// sends Action.Submit as a message; the outcome note goes to the
// clicker's personal chat, never to the channel.
func TestSubmitFallbackTellsPrivately(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)})
	m := e.card(q.ID, nil)
	data := action(t, m, card.LabelDeny)
	data[data[teams.DataInput].(string)] = "not on a Friday"
	if status, _, err := e.fake.Deliver(e.fake.SubmitActivity(mallory, m, data), ""); err != nil || status != http.StatusOK {
		t.Fatalf("submit: %d %v", status, err)
	}
	if !e.toldPrivately(mallory, "not") {
		t.Fatalf("the refused clicker was not told privately: %+v", e.fake.Messages())
	}
	if e.get(q.ID).State != core.StateOpen {
		t.Fatal("a stranger's submit counted")
	}
	if status, _, err := e.fake.Deliver(e.fake.SubmitActivity(bob, m, data), ""); err != nil || status != http.StatusOK {
		t.Fatalf("submit: %d %v", status, err)
	}
	got := e.get(q.ID)
	if got.State != core.StateAnswered || got.Resolution.Reason != "not on a Friday" {
		t.Fatalf("recorded %s %+v", got.State, got.Resolution)
	}
	for _, x := range e.fake.Messages() {
		if x.Channel == channel && x.Card == nil {
			t.Fatalf("a note went to the channel: %+v", x)
		}
	}
}

// TestAppTokenIsCached: many calls, one client-credentials token.
func TestAppTokenIsCached(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy " + string(rune('a'+i)) + "?", Tool: "deploy", Arguments: []byte(`{}`)})
		e.card(q.ID, nil)
	}
	if n := e.fake.TokensIssued(); n != 1 {
		t.Fatalf("%d tokens fetched for three posts; want one, cached", n)
	}
}
