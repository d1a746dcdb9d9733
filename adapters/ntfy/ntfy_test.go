package ntfy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/adapters/ntfy"
	"github.com/askbridge/askbridge/adapters/ntfy/ntfyfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const (
	topic = "ops-approvals"
	token = "tk_testtoken0123456789"
	key   = "server key of the test, 32 bytes"
)

type env struct {
	t    *testing.T
	svc  *core.Service
	fake *ntfyfake.Server // nil when envOptions.server names another
	a    *ntfy.Adapter
}

// envOptions is what an env varies: the token the adapter sends, the
// configured people, the service's clock (nil: the wall clock; the
// adapter has none of its own, so it reads the service's) and the ntfy
// server's URL ("": a fake of the env's own, e.fake).
type envOptions struct {
	token  string
	people map[string]core.Person
	clock  core.Clock
	server string
}

func newEnv(t *testing.T, tok string) *env {
	t.Helper()
	return newEnvWith(t, envOptions{token: tok})
}

// newEnvPeople is newEnv with the configured people.
func newEnvPeople(t *testing.T, tok string, people map[string]core.Person) *env {
	t.Helper()
	return newEnvWith(t, envOptions{token: tok, people: people})
}

func newEnvWith(t *testing.T, o envOptions) *env {
	t.Helper()
	svc, _ := coretest.Open(t, coretest.Options{Clock: o.clock, Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceNtfy, ID: topic}},
		Deciders: map[core.Surface][]string{core.SurfaceNtfy: {topic}, core.SurfaceAPI: {"*"}},
	}}, People: o.people})
	e := &env{t: t, svc: svc}
	if o.server == "" {
		e.fake = ntfyfake.Start(t, token)
		o.server = e.fake.URL
	}
	mux := http.NewServeMux()
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	a, err := ntfy.New(svc, ntfy.Options{ServerURL: o.server, Token: o.token, PublicURL: web.URL, Key: []byte(key), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	a.Mount(mux)
	e.a = a
	return e
}

func (e *env) deliver() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		loops.Deliver(ctx, e.svc, e.a, loops.DeliverOptions{Block: 50 * time.Millisecond, MinIdle: time.Second, RetryWait: 10 * time.Millisecond})
	})
	e.t.Cleanup(func() { cancel(); wg.Wait() })
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

func (e *env) notification(n int) ntfyfake.Message {
	e.t.Helper()
	ms, ok := e.fake.Wait(topic, 10*time.Second, func(ms []ntfyfake.Message) bool { return len(ms) >= n })
	if !ok {
		e.t.Fatalf("%d notifications, want %d", len(ms), n)
	}
	return ms[n-1]
}

func (e *env) get(id core.QuestionID) *core.Question {
	q, err := e.svc.Get(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

// The ntfy case: the notification's Approve button closes the
// question, as the topic; tapped again it records nothing and says why.
func TestApproveFromNotification(t *testing.T) {
	e := newEnv(t, token)
	e.deliver()
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the staging table?", Tool: "sql.exec",
		Arguments: []byte(`{"sql":"DROP TABLE t"}`)})
	m := e.notification(1)
	if m.Title != "Approval needed" || m.Priority != 4 || len(m.Tags) != 1 || m.Tags[0] != "warning" || m.Long {
		t.Fatalf("notification %+v", m)
	}
	for _, want := range []string{"Drop the staging table?", "sql.exec", `"sql": "DROP TABLE t"`, card.HardToReverseMarker} {
		if !strings.Contains(m.Message, want) {
			t.Fatalf("the message lacks %q:\n%s", want, m.Message)
		}
	}
	var labels []string
	for _, a := range m.Actions {
		labels = append(labels, a.Label)
		if a.Action != "http" || a.Method != http.MethodPost || !a.Clear || !strings.Contains(a.URL, ntfy.ActPath) {
			t.Fatalf("button %+v", a)
		}
	}
	if strings.Join(labels, "|") != "Approve|Deny|Decline: let the agent decide" {
		t.Fatalf("buttons %v", labels)
	}
	status, body := ntfyfake.Tap(t, m, card.LabelApprove)
	if status != 200 || !strings.Contains(body, "Recorded: Approved") {
		t.Fatalf("tap: %d\n%s", status, body)
	}
	got := e.get(q.ID)
	if got.State != core.StateAnswered || got.Resolution.Decider.Surface != core.SurfaceNtfy || got.Resolution.Decider.ID != topic {
		t.Fatalf("recorded %s %+v", got.State, got.Resolution)
	}
	if status, body := ntfyfake.Tap(t, m, card.LabelApprove); status != http.StatusConflict || !strings.Contains(body, "Already closed") {
		t.Fatalf("second tap: %d\n%s", status, body)
	}
	if status, _ := ntfyfake.Tap(t, m, card.LabelDeny); status != http.StatusConflict {
		t.Fatalf("a late deny: %d", status)
	}
	if n := len(coretest.OfQuestion(coretest.EventsOf(t, e.svc, q.ID), q.ID)); n == 0 {
		t.Fatal("no events")
	}
}

var href = regexp.MustCompile(`href="([^"]*)"`)

// A decision with more options than fit: two buttons and "More choices",
// which opens the page of every choice, as tapping the notification does.
func TestMoreChoicesThanButtons(t *testing.T) {
	e := newEnv(t, token)
	e.deliver()
	q := e.ask(core.AskInput{Kind: core.KindDecision, Text: "Which database?", Options: []core.Option{
		{ID: "pg", Title: "PostgreSQL", Writeup: "Known.", Recommended: true},
		{ID: "ddb", Title: "DynamoDB", Writeup: "Scales out."},
		{ID: "lite", Title: "SQLite", Writeup: "One file."}}})
	m := e.notification(1)
	if len(m.Actions) != 3 || m.Actions[2].Label != ntfy.MoreLabel || m.Actions[2].Action != "view" || m.Click != m.Actions[2].URL {
		t.Fatalf("buttons %+v, click %q", m.Actions, m.Click)
	}
	status, page := ntfyfake.Tap(t, m, ntfy.MoreLabel)
	links := href.FindAllStringSubmatch(page, -1)
	if status != 200 || len(links) != 4 || !strings.Contains(page, "SQLite") {
		t.Fatalf("menu: %d, %d links\n%s", status, len(links), page)
	}
	// The menu only lists: a POST to it records nothing.
	if res, err := http.PostForm(m.Click, url.Values{}); err != nil || res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST to the menu: %v %v", res, err)
	}
	base, _ := url.Parse(m.Click)
	third, _ := base.Parse(links[2][1])
	res, err := http.PostForm(third.String(), url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if r := e.get(q.ID).Resolution; res.StatusCode != 200 || r == nil || r.OptionID != "lite" {
		t.Fatalf("picked from the menu: %d, %+v", res.StatusCode, r)
	}
}

// A clarification's button opens the page with a text box, and says so:
// a notification takes no reply, so "Reply to answer" promised what the
// tap does not do.
func TestClarificationOpensThePage(t *testing.T) {
	e := newEnv(t, token)
	e.deliver()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	m := e.notification(1)
	var answer ntfyfake.Action
	for _, a := range m.Actions {
		if a.Label == card.LabelAnswerOnPage {
			answer = a
		}
	}
	if answer.Action != "view" {
		t.Fatalf("the answer button is %+v", m.Actions)
	}
	if status, body := ntfyfake.Tap(t, m, card.LabelAnswerOnPage); status != 200 || !strings.Contains(body, "<textarea") || strings.Contains(body, `name="address"`) {
		t.Fatalf("page: %d\n%s", status, body)
	}
	res, err := http.PostForm(answer.URL, url.Values{"text": {"eu-west-1"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if r := e.get(q.ID).Resolution; r == nil || r.Answer != "eu-west-1" {
		t.Fatalf("recorded %+v", r)
	}
}

// ntfy's refusals: a 429 waits five seconds (the refill of its request
// bucket), a refused token is given up on, and a question closed before
// its notification went out is not published.
func TestRefusals(t *testing.T) {
	e := newEnv(t, token)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	card := core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Delivery: "d1", Kind: core.DeliverPost}
	e.fake.Limit(1)
	_, err := e.a.Post(t.Context(), q, card)
	var ra *core.RetryAfter
	if !errors.As(err, &ra) || ra.After != 5*time.Second {
		t.Fatalf("a 429: %v", err)
	}
	ref, err := e.a.Post(t.Context(), q, card)
	if err != nil || ref.ID == "" {
		t.Fatalf("after the wait: %+v, %v", ref, err)
	}

	bad := newEnv(t, "tk_wrong")
	_, err = bad.a.Post(t.Context(), q, card)
	var perm *core.Permanent
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a refused token: %v", err)
	}

	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}, Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	closed := e.get(q.ID)
	if _, err := e.a.Post(t.Context(), closed, card); !errors.As(err, &perm) {
		t.Fatalf("a closed question: %v", err)
	}
	if n := len(e.fake.Messages(topic)); n != 1 {
		t.Fatalf("%d notifications, want the one", n)
	}
}

// A question longer than ntfy takes is cut to fit, from its long parts.
func TestMessageFitsNtfysLimit(t *testing.T) {
	q := &core.Question{ID: "b234567abcdefghij", Kind: core.KindApproval, State: core.StateOpen, Text: strings.Repeat("Why? ", 2000),
		Context: strings.Repeat("ctx ", 2000), Call: &core.ToolCall{Tool: "shell.run", Arguments: json.RawMessage(`{"cmd":"` + strings.Repeat("x", 9000) + `"}`)},
		Reversibility: core.HardToReverse, Deadline: time.Now().Add(time.Hour)}
	p := ntfy.Render(card.New(q, core.MessageRef{Kind: core.DeliverPost}), topic, nil, "")
	if len(p.Message) > ntfy.MaxMessage || !strings.HasPrefix(p.Message, card.HardToReverseMarker+"\nWhy? Why?") {
		t.Fatalf("%d bytes:\n%.300s", len(p.Message), p.Message)
	}
	raw, _ := json.Marshal(p)
	if _, err := ntfyfake.Decode(bytes.NewReader(raw)); err != nil {
		t.Fatalf("ntfy would refuse it: %v", err)
	}
}

// TestCardFixtures renders the shared card fixtures into golden files
// beside the other platforms', and each must be a publish ntfy takes.
func TestCardFixtures(t *testing.T) {
	signer, _ := actionlink.NewSigner([]byte(key))
	q := &core.Question{Deadline: time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)}
	for _, f := range adaptertest.CardFixtures() {
		t.Run(f.Name, func(t *testing.T) {
			links, err := signer.Links(q, f.Card, core.SurfaceNtfy, topic, "https://bridge.example.test"+ntfy.ActPath)
			if err != nil {
				t.Fatal(err)
			}
			menu, err := signer.MenuLink(q, f.Card, core.SurfaceNtfy, topic, "https://bridge.example.test"+ntfy.ActPath)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(ntfy.Render(f.Card, topic, links, menu), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ntfyfake.Decode(bytes.NewReader(got)); err != nil {
				t.Fatalf("ntfy would refuse it: %v", err)
			}
			adaptertest.Golden(t, *update, core.SurfaceNtfy, f.Name, append(adaptertest.ReadableLinks(t, signer, got, q.Deadline.Add(-time.Hour)), '\n'))
		})
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	good := ntfy.Options{ServerURL: "https://ntfy.sh", PublicURL: "https://bridge.example.test", Key: []byte(key)}
	for name, mut := range map[string]func(*ntfy.Options){
		"no server": func(o *ntfy.Options) { o.ServerURL = "" },
		"no public": func(o *ntfy.Options) { o.PublicURL = "bridge" },
		"short key": func(o *ntfy.Options) { o.Key = nil },
	} {
		o := good
		mut(&o)
		if _, err := ntfy.New(nil, o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	_ = io.Discard
}

// Sends spend from the room's budget and the server's, which is ntfy's
// default for one visitor; an update publishes nothing.
func TestBudgets(t *testing.T) {
	e := newEnv(t, token)
	post := e.a.Budgets(core.Delivery{Kind: core.DeliverRemind, Room: topic})
	if len(post) != 2 || post[0].Key != "ntfy:all" || post[0].Limit.Burst != 60 || post[1].Key != "ntfy:room:"+topic {
		t.Fatalf("a reminder spends %+v", post)
	}
	if up := e.a.Budgets(core.Delivery{Kind: core.DeliverUpdate, Room: topic}); len(up) != 0 {
		t.Fatalf("an update spends %+v", up)
	}
}

// TestNewRefusesTheServerURLFirst: with both URLs wrong, the refusal
// names the server's, every time.
func TestNewRefusesTheServerURLFirst(t *testing.T) {
	for range 30 {
		if _, err := ntfy.New(nil, ntfy.Options{ServerURL: "ntfy.example", PublicURL: "ftp://askbridge.example"}); err == nil || !strings.Contains(err.Error(), "the server URL") {
			t.Fatalf("New: %v; want the server URL refused", err)
		}
	}
}

// TestNoOneTapApproveForArgumentsNotShown: an approval whose arguments
// the notification cannot show whole (cut at their share, or pushed past
// ntfy's limit by a long question) offers no http button: its actions
// open their pages, which show the call whole; one shown whole keeps its
// one-tap Approve. Before, Approve recorded from the lock screen with the
// arguments cut away.
func TestNoOneTapApproveForArgumentsNotShown(t *testing.T) {
	signer, _ := actionlink.NewSigner([]byte(key))
	approval := func(text, context, args string) ntfy.Publication {
		q := &core.Question{ID: "b234567abcdefghij", Kind: core.KindApproval, State: core.StateOpen, Text: text, Context: context,
			Call: &core.ToolCall{Tool: "shell.run", Arguments: json.RawMessage(args)}, Reversibility: core.HardToReverse, Deadline: time.Now().Add(time.Hour)}
		c := card.New(q, core.MessageRef{Kind: core.DeliverPost})
		links, err := signer.Links(q, c, core.SurfaceNtfy, topic, "https://bridge.example.test"+ntfy.ActPath)
		if err != nil {
			t.Fatal(err)
		}
		return ntfy.Render(c, topic, links, "https://bridge.example.test/menu")
	}
	oneTap := func(p ntfy.Publication) bool {
		for _, a := range p.Actions {
			if a.Action == "http" {
				return true
			}
		}
		return false
	}
	if p := approval("Run it?", "", `{"cmd":"ls"}`); !oneTap(p) {
		t.Errorf("an approval shown whole lost its one-tap buttons: %+v", p.Actions)
	}
	for name, p := range map[string]ntfy.Publication{
		"a long question": approval(strings.Repeat("界", 1200), strings.Repeat("界", 600), `{"cmd":"rm -rf /"}`),
		"long arguments":  approval("Run it?", "", `{"cmd":"`+strings.Repeat("x", 2000)+` && rm -rf /"}`),
	} {
		if oneTap(p) {
			t.Errorf("%s: a one-tap button for arguments the message does not show whole:\n%.200s", name, p.Message)
		}
	}
}
