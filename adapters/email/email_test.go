package email_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const (
	alice = "alice@example.test"
	carol = "carol@example.test" // mailed, may not decide
	key   = "server key of the test, 32 bytes"
)

// env is the adapter on a real core (embedded store), mailing a local
// SMTP server, with its page served over HTTP.
type env struct {
	t    *testing.T
	errs chan error // every failed delivery, as the outbox reports it
	svc  *core.Service
	smtp *emailfake.Server
	a    *email.Adapter
	web  *httptest.Server
}

func newEnv(t *testing.T) *env { return newEnvTLS(t, emailfake.Options{}, email.TLSNone) }

func newEnvTLS(t *testing.T, o emailfake.Options, mode string) *env {
	t.Helper()
	svc, _ := coretest.Open(t, coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceEmail, ID: alice}, {Surface: core.SurfaceEmail, ID: carol}},
		Deciders: map[core.Surface][]string{core.SurfaceEmail: {alice}, core.SurfaceAPI: {"*"}},
	}}})
	fake := emailfake.Start(t, o)
	host, port, _ := strings.Cut(fake.Addr, ":")
	p, _ := strconv.Atoi(port)
	var err error
	e := &env{t: t, svc: svc, smtp: fake, errs: make(chan error, 100)}
	mux := http.NewServeMux()
	e.web = httptest.NewServer(mux)
	t.Cleanup(e.web.Close)
	e.a, err = email.New(svc, email.Options{Host: host, Port: p, TLS: mode, RootCAs: fake.Roots, Username: o.User, Password: o.Pass,
		From: "askbridge <askbridge@bridge.example.test>", PublicURL: e.web.URL, Key: []byte(key), DeferWait: 10 * time.Millisecond, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	e.a.Mount(mux)
	return e
}

// deliver runs the outbox for email until the test ends.
func (e *env) deliver() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		loops.Deliver(ctx, e.svc, e.a, loops.DeliverOptions{Block: 50 * time.Millisecond, MinIdle: time.Second, RetryWait: 10 * time.Millisecond,
			OnError: func(_ core.Delivery, err error) {
				select {
				case e.errs <- err:
				default:
				}
			}})
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

// mail waits for the n-th message to to.
func (e *env) mail(to string, n int) emailfake.Message {
	e.t.Helper()
	box, ok := e.smtp.Wait(to, 10*time.Second, func(b []emailfake.Message) bool { return len(b) >= n })
	if !ok {
		e.t.Fatalf("%s has %d messages, want %d", to, len(box), n)
	}
	return box[n-1]
}

// link is the message's link whose text part names label just above it.
func link(t *testing.T, m emailfake.Message, label string) string {
	t.Helper()
	lines := strings.Split(m.Text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == label+":" && i+1 < len(lines) {
			return strings.TrimSpace(lines[i+1])
		}
	}
	t.Fatalf("no %q link in:\n%s", label, m.Text)
	return ""
}

func do(t *testing.T, method, u string, form url.Values) (int, string) {
	t.Helper()
	var res *http.Response
	var err error
	if method == http.MethodPost {
		res, err = http.PostForm(u, form)
	} else {
		res, err = http.Get(u)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (e *env) get(id core.QuestionID) *core.Question {
	q, err := e.svc.Get(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

func count(evs []core.Event, k core.EventKind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

// The email case end to end: the message reads well, a scanner
// opening every link answers nothing, the person confirms on the page,
// the same link again records nothing, a late click shows the outcome,
// and nobody is mailed again.
func TestApprovalByEmail(t *testing.T) {
	e := newEnv(t)
	e.deliver()
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the staging table?", Context: "Nightly job left it behind.",
		Tool: "sql.exec", Arguments: []byte(`{"sql":"DROP TABLE t","target":"staging"}`)})
	m := e.mail(alice, 1)
	for _, want := range []string{"Drop the staging table?", "Nightly job left it behind.", "Tool: sql.exec",
		"> {\n>   \"sql\": \"DROP TABLE t\",\n>   \"target\": \"staging\"\n> }", card.HardToReverseMarker, "Agent: deploy-bot", "Do not forward"} {
		if !strings.Contains(m.Text, want) {
			t.Fatalf("the text part lacks %q:\n%s", want, m.Text)
		}
	}
	if !strings.Contains(m.HTML, "<pre") || !strings.Contains(m.HTML, "&#34;sql&#34;: &#34;DROP TABLE t&#34;") {
		t.Fatalf("the HTML part does not show the arguments:\n%s", m.HTML)
	}
	if !strings.HasPrefix(m.Subject, card.HardToReverseMarker+": Approval needed: Drop the staging table?") ||
		m.Header.Get("Auto-Submitted") != "auto-generated" || m.MessageID == "" {
		t.Fatalf("subject %q, headers %v", m.Subject, m.Header)
	}
	// Both copies are out before anyone acts (a copy still queued when
	// the question closes is never sent: TestClosedBeforeSendingIsNotMailed).
	e.until(q.ID, func(q *core.Question) bool { return len(q.Messages) == 2 })
	if len(m.Links) != 3 { // approve, deny, decline
		t.Fatalf("links %v", m.Links)
	}
	// A mail scanner opens every link, twice.
	for range 2 {
		for _, u := range m.Links {
			if status, _ := do(t, http.MethodGet, u, nil); status != http.StatusOK {
				t.Fatalf("GET %s: %d", u, status)
			}
		}
	}
	if got := e.get(q.ID); !got.Open() {
		t.Fatalf("a scanner's GET answered: %s", got.State)
	}
	approve := link(t, m, card.LabelApprove)
	if status, body := do(t, http.MethodPost, approve, url.Values{"address": {alice}}); status != 200 || !strings.Contains(body, "Recorded: Approved") {
		t.Fatalf("confirm: %d\n%s", status, body)
	}
	got := e.get(q.ID)
	if got.State != core.StateAnswered || got.Resolution.Decider.Surface != core.SurfaceEmail || got.Resolution.Decider.ID != alice {
		t.Fatalf("recorded %s %+v", got.State, got.Resolution)
	}
	if status, body := do(t, http.MethodPost, approve, url.Values{"address": {alice}}); status != http.StatusConflict || !strings.Contains(body, "Already closed") {
		t.Fatalf("second use: %d\n%s", status, body)
	}
	if _, body := do(t, http.MethodGet, link(t, m, card.LabelDeny), nil); !strings.Contains(body, "Answered by an email recipient") || strings.Contains(body, alice) {
		t.Fatalf("a late click does not show the outcome:\n%s", body)
	}
	evs := coretest.EventsOf(t, e.svc, q.ID)
	if count(evs, core.EventAnswered) != 1 || count(evs, core.EventNotified) != 2 {
		t.Fatalf("events %v", coretest.Kinds(evs))
	}
	// Carol was mailed too, and is mailed nothing more: the next question
	// is her second message.
	e.mail(carol, 1)
	q2 := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	if m := e.mail(carol, 2); !strings.Contains(m.Subject, "Which region?") {
		t.Fatalf("carol's second message is %q, not the next question (q1's close mailed her?)", m.Subject)
	}
	_ = q2
}

// A decision shows every option with its write-up, each with its own
// link; a clarification's link opens a page with a text box.
func TestDecisionAndClarification(t *testing.T) {
	e := newEnv(t)
	e.deliver()
	e.ask(core.AskInput{Kind: core.KindDecision, Text: "Which database?", Options: []core.Option{
		{ID: "pg", Title: "PostgreSQL", Writeup: "Known; sharding later is work.", Recommended: true},
		{ID: "ddb", Title: "DynamoDB", Writeup: "Scales out; queries are constrained."}}})
	m := e.mail(alice, 1)
	for _, want := range []string{"1. PostgreSQL (Recommended)", "Known; sharding later is work.", "2. DynamoDB", "Scales out; queries are constrained."} {
		if !strings.Contains(m.Text, want) {
			t.Fatalf("the message lacks %q:\n%s", want, m.Text)
		}
	}
	for _, want := range []string{"PostgreSQL", "(Recommended)", "Known; sharding later is work.", "Scales out; queries are constrained."} {
		if !strings.Contains(m.HTML, want) {
			t.Fatalf("the HTML part lacks %q:\n%s", want, m.HTML)
		}
	}
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	c := e.mail(alice, 2)
	u := link(t, c, card.LabelAnswerOnPage)
	if _, body := do(t, http.MethodGet, u, nil); !strings.Contains(body, "<textarea") {
		t.Fatalf("the answer page has no text box:\n%s", body)
	}
	if status, _ := do(t, http.MethodPost, u, url.Values{"address": {alice}, "text": {"eu-west-1"}}); status != 200 {
		t.Fatalf("answer: %d", status)
	}
	if r := e.get(q.ID).Resolution; r == nil || r.Answer != "eu-west-1" {
		t.Fatalf("recorded %+v", r)
	}
}

// A question closed before its mail went out is not mailed, and the
// record says so.
func TestClosedBeforeSendingIsNotMailed(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}, Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	e.deliver()
	e.ask(core.AskInput{Kind: core.KindClarification, Text: "Marker question"})
	// Each room's deliveries go in order, and rooms go side by side: once
	// both recipients have the marker, the closed question's delivery to
	// each has been given up on and recorded.
	for _, to := range []string{alice, carol} {
		if m := e.mail(to, 1); !strings.Contains(m.Subject, "Marker question") {
			t.Fatalf("%s got %q first: the closed question was mailed", to, m.Subject)
		}
	}
	evs := coretest.EventsOf(t, e.svc, q.ID)
	if count(evs, core.EventUndelivered) != 2 || count(evs, core.EventNotified) != 0 {
		t.Fatalf("events %v", coretest.Kinds(evs))
	}
	for _, ev := range evs {
		if ev.Kind == core.EventUndelivered && !strings.Contains(ev.Reason, "closed before") {
			t.Fatalf("undelivered because %q", ev.Reason)
		}
	}
}

// A relay's temporary refusal is retried (TestATemporaryRefusalIsNoFailedAttempt);
// a permanent one is given up on and recorded.
func TestRelayRefusals(t *testing.T) {
	e := newEnv(t)
	e.smtp.Refuse(alice, &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try later"})
	e.smtp.Refuse(carol, &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"})
	e.deliver()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	e.mail(alice, 1)
	var perm *core.Permanent
	for !errors.As(e.failure(), &perm) {
	}
	e.until(q.ID, func(q *core.Question) bool { return len(q.Messages) == 1 })
	evs := coretest.EventsOf(t, e.svc, q.ID)
	if count(evs, core.EventUndelivered) != 1 || count(evs, core.EventNotified) != 1 || len(e.smtp.Mailbox(carol)) != 0 {
		t.Fatalf("events %v", coretest.Kinds(evs))
	}
	for _, ev := range evs {
		if ev.Kind == core.EventUndelivered && !strings.Contains(ev.Reason, "no such mailbox") {
			t.Fatalf("undelivered because %q", ev.Reason)
		}
	}
}

// until waits until question id satisfies cond, woken by its changes.
func (e *env) until(id core.QuestionID, cond func(*core.Question) bool) *core.Question {
	e.t.Helper()
	w, err := e.svc.Watch(id)
	if err != nil {
		e.t.Fatal(err)
	}
	defer w.Stop()
	timeout := time.After(10 * time.Second)
	for {
		q, err := w.Read(e.t.Context())
		if err != nil {
			e.t.Fatal(err)
		}
		if cond(q) {
			return q
		}
		select {
		case <-w.Changed():
		case <-timeout:
			e.t.Fatalf("question %s never got there: %+v", id, q)
		}
	}
}

// failure waits for the outbox's next failed delivery.
func (e *env) failure() error {
	e.t.Helper()
	select {
	case err := <-e.errs:
		return err
	case <-time.After(10 * time.Second):
		e.t.Fatal("no delivery failed")
	}
	return nil
}

func TestAuthenticates(t *testing.T) {
	e := newEnvTLS(t, emailfake.Options{User: "askbridge", Pass: "relay password"}, email.TLSStartTLS)
	e.deliver()
	e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	e.mail(alice, 1)
	if e.smtp.Authenticated() == 0 {
		t.Fatal("mail went through without authenticating")
	}
	// A relay that does not offer TLS gets nothing under the default mode.
	e2 := newEnvTLS(t, emailfake.Options{NoTLS: true}, email.TLSStartTLS)
	e2.deliver()
	e2.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	var ns *core.NotSent
	if err := e2.failure(); !errors.As(err, &ns) || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("without TLS: %v", err)
	}
	if n := len(e2.smtp.Mailbox(alice)) + len(e2.smtp.Mailbox(carol)); n != 0 {
		t.Fatalf("%d messages went out in plain text", n)
	}
}

// Implicit TLS (port 465) is encrypted from the first byte, so the
// adapter authenticates over it with PLAIN, as over STARTTLS.
func TestImplicitTLSAuthenticates(t *testing.T) {
	e := newEnvTLS(t, emailfake.Options{User: "askbridge", Pass: "relay password", Implicit: true}, email.TLSImplicit)
	e.deliver()
	e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	e.mail(alice, 1)
	if e.smtp.Authenticated() == 0 {
		t.Fatal("mail went through without authenticating")
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	good := email.Options{Host: "smtp.example.test", From: "askbridge@example.test", PublicURL: "https://bridge.example.test", Key: []byte(key)}
	for name, mut := range map[string]func(*email.Options){
		"no host":    func(o *email.Options) { o.Host = "" },
		"bad from":   func(o *email.Options) { o.From = "not an address" },
		"no url":     func(o *email.Options) { o.PublicURL = "" },
		"bad tls":    func(o *email.Options) { o.TLS = "sometimes" },
		"short key":  func(o *email.Options) { o.Key = []byte("short") },
		"ftp public": func(o *email.Options) { o.PublicURL = "ftp://bridge" },
		// The port is EMAIL_SMTP_PORT's: a host written with one, or as a
		// URL, was taken and every mail then failed at the dial.
		"host:port": func(o *email.Options) { o.Host = "smtp.example.test:587" },
		"host URL":  func(o *email.Options) { o.Host = "smtp://smtp.example.test" },
		"host path": func(o *email.Options) { o.Host = "smtp.example.test/" },
	} {
		o := good
		mut(&o)
		if _, err := email.New(nil, o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := email.New(nil, good); err != nil {
		t.Fatal(err)
	}
}

// TestCardFixtures renders the cards every platform is checked on into
// golden files beside the other platforms', with each link shown as what
// it opens (adaptertest.ReadableLinks).
func TestCardFixtures(t *testing.T) {
	signer, _ := actionlink.NewSigner([]byte(key))
	expires := time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)
	for _, f := range adaptertest.CardFixtures() {
		t.Run(f.Name, func(t *testing.T) {
			links := email.Links{}
			for _, a := range actionlink.Actions(f.Card) {
				tok, err := signer.Sign(actionlink.Claims{Ref: a.Ref, Surface: core.SurfaceEmail, To: alice, Expires: expires})
				if err != nil {
					t.Fatal(err)
				}
				links[a.Ref] = "https://bridge.example.test" + email.ActPath + tok
			}
			m, err := email.RenderCard(f.Card, links)
			if err != nil {
				t.Fatal(err)
			}
			got := "Subject: " + m.Subject + "\n\n== text/plain\n" + m.Text + "\n== text/html\n" + m.HTML
			adaptertest.Golden(t, *update, core.SurfaceEmail, f.Name, adaptertest.ReadableLinks(t, signer, []byte(got), expires.Add(-time.Hour)))
		})
	}
}

// A card is never mailed with an action that has no link.
func TestRenderRefusesMissingLinks(t *testing.T) {
	for _, f := range adaptertest.CardFixtures() {
		if len(actionlink.Actions(f.Card)) == 0 {
			continue
		}
		if _, err := email.RenderCard(f.Card, email.Links{}); err == nil {
			t.Fatalf("%s rendered without its links", f.Name)
		}
	}
}

// Sends spend from the room's budget and the relay's; an update sends
// nothing, so it spends nothing.
func TestBudgets(t *testing.T) {
	e := newEnv(t)
	post := e.a.Budgets(core.Delivery{Kind: core.DeliverPost, Room: core.DMRoom(alice)})
	if len(post) != 2 || post[0].Key != "email:all" || post[1].Key != "email:to:"+core.DMRoom(alice) {
		t.Fatalf("a post spends %+v", post)
	}
	if up := e.a.Budgets(core.Delivery{Kind: core.DeliverUpdate, Room: alice}); len(up) != 0 {
		t.Fatalf("an update spends %+v", up)
	}
}
