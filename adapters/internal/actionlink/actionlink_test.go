package actionlink_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/rs/zerolog"
)

var epoch = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

// Recipients of the bridge's questions (newBridge says who may decide).
const (
	alice, carol, emile = "alice@example.test", "carol@example.test", "émile@example.fr"
	aliceTopic          = "s3cret-topic-of-alice"
)

func signer(t *testing.T, key string) *actionlink.Signer {
	t.Helper()
	s, err := actionlink.NewSigner([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTokenRoundTripAndRefusals(t *testing.T) {
	s := signer(t, "server key of the test, 32 bytes")
	c := actionlink.Claims{Ref: core.Ref{QuestionID: "b234567abcdefghij", Item: -1, Action: core.RefApprove},
		Surface: core.SurfaceEmail, To: alice, Expires: epoch.Add(time.Hour)}
	tok, err := s.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Verify(tok, epoch)
	if err != nil || got != c {
		t.Fatalf("Verify = %+v, %v; want %+v", got, err, c)
	}
	if _, err := s.Verify(tok, epoch.Add(time.Hour)); err != actionlink.ErrExpired {
		t.Fatalf("at its expiry: %v, want ErrExpired", err)
	}
	// Another server's key, and every single-character change, are refused.
	if _, err := signer(t, "another server's key, 32 bytes!").Verify(tok, epoch); err != actionlink.ErrAltered {
		t.Fatalf("another key: %v", err)
	}
	// Every other character in every place: the last character of a
	// base64 spelling has unused bits, which must not let a second
	// spelling of the same token through.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
	for i := range tok {
		for _, r := range alphabet {
			if byte(r) == tok[i] {
				continue
			}
			b := []byte(tok)
			b[i] = byte(r)
			if _, err := s.Verify(string(b), epoch); err != actionlink.ErrAltered {
				t.Fatalf("%q at %d: %v", r, i, err)
			}
		}
	}
	for _, bad := range []string{"", ".", "abc", tok + "x", strings.Repeat("a", actionlink.MaxTokenLen+1)} {
		if _, err := s.Verify(bad, epoch); err != actionlink.ErrAltered {
			t.Fatalf("Verify(%.20q) = %v", bad, err)
		}
	}
	if _, err := s.Sign(actionlink.Claims{Ref: c.Ref, Surface: core.SurfaceAPI, To: alice, Expires: c.Expires}); err == nil {
		t.Fatal("signed a link for a surface that posts no cards")
	}
	if _, err := actionlink.NewSigner([]byte("short")); err == nil {
		t.Fatal("accepted a short server key")
	}
}

// TestTokenHidesItsRecipient: a link names its recipient to nobody who
// holds it: the address or ntfy topic (a password) is sealed, not merely
// signed, so it is not in the URL that proxies log and browsers keep, and
// a forwarded email link does not give away the address its page asks
// for. Before, the token was readable base64 of its claims. A link sent
// before (signed alone) still works until it expires.
func TestTokenHidesItsRecipient(t *testing.T) {
	s := signer(t, "server key of the test, 32 bytes")
	const topic = "s3cret-topic-of-alice"
	for _, c := range []actionlink.Claims{
		{Ref: core.Ref{QuestionID: "b234567abcdefghij", Item: -1, Action: core.RefApprove}, Surface: core.SurfaceEmail, To: alice, Expires: epoch.Add(time.Hour)},
		{Ref: core.Ref{QuestionID: "b234567abcdefghij", Item: -1, Action: core.RefApprove}, Surface: core.SurfaceNtfy, To: topic, Expires: epoch.Add(time.Hour), Menu: true},
	} {
		tok, err := s.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		var plain []byte
		for part := range strings.SplitSeq(tok, ".") {
			b, _ := base64.RawURLEncoding.DecodeString(part)
			plain = append(plain, b...)
		}
		if strings.Contains(tok, c.To) || bytes.Contains(plain, []byte(c.To)) || bytes.Contains(plain, []byte(c.Ref.QuestionID)) {
			t.Errorf("the token of a link to %s reads: %q", c.To, plain)
		}
		if got, err := s.Verify(tok, epoch); err != nil || got != c {
			t.Errorf("Verify = %+v, %v; want %+v", got, err, c)
		}
	}
	// A link signed as before this change (with this key, for alice,
	// until 2099).
	const before = "eyJyIjoiMWEtMGIyMzQ1NjdhYmNkZWZnaGlqIiwicyI6ImVtYWlsIiwidCI6ImFsaWNlQGV4YW1wbGUudGVzdCIsImUiOjQwNzA5MDg4MDB9.-dKMVZSPT8jWjtiKG8-dzvFsPJFUhBYy7LBrVR3SsGU"
	if got, err := s.Verify(before, epoch); err != nil || got.To != alice || got.Ref.QuestionID != "b234567abcdefghij" {
		t.Errorf("a link sent before: %+v, %v", got, err)
	}
	if _, err := signer(t, "another server's key, 32 bytes!").Verify(before, epoch); err != actionlink.ErrAltered {
		t.Errorf("a link sent before, under another key: %v", err)
	}
}

// FuzzVerify: whatever a URL carries, Verify either refuses it or returns
// claims that sign back to a token that verifies the same.
func FuzzVerify(f *testing.F) {
	s, _ := actionlink.NewSigner([]byte("server key of the test, 32 bytes"))
	tok, _ := s.Sign(actionlink.Claims{Ref: core.Ref{QuestionID: "b234567abcdefghij", Item: -1, Action: core.RefDeny},
		Surface: core.SurfaceNtfy, To: "topic", Expires: epoch.Add(time.Hour)})
	f.Add(tok)
	f.Add("e30.AAAA")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := s.Verify(tok, epoch)
		if err != nil {
			return
		}
		again, err := s.Sign(c)
		if err != nil {
			t.Fatalf("verified claims do not sign: %+v: %v", c, err)
		}
		if c2, err := s.Verify(again, epoch); err != nil || c2 != c {
			t.Fatalf("re-signed claims %+v verify as %+v, %v", c, c2, err)
		}
	})
}

// bridge is a core on the embedded store with one route whose email
// recipients alice and émile may decide and carol may not (nor ntfy
// topics but alice's), and the page over it.
type bridge struct {
	t     *testing.T
	svc   *core.Service
	clock *core.SimClock
	s     *actionlink.Signer
	srv   *httptest.Server
}

func newBridge(t *testing.T) *bridge {
	clock := core.NewSimClock(epoch)
	st := coretest.OpenStore(t)
	svc := coretest.Service(t, st, coretest.Options{Clock: clock, Routes: map[string]core.Route{"ops": {
		Rooms:      []core.Room{{Surface: core.SurfaceEmail, ID: alice}, {Surface: core.SurfaceEmail, ID: carol}},
		Deciders:   map[core.Surface][]string{core.SurfaceEmail: {alice, emile}, core.SurfaceNtfy: {aliceTopic}, core.SurfaceAPI: {"*"}},
		EscalateTo: "oncall",
	}, "oncall": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}}}})
	b := &bridge{t: t, svc: svc, clock: clock, s: signer(t, "server key of the test, 32 bytes")}
	mux := http.NewServeMux()
	mux.Handle("/email/act/", &actionlink.Page{Svc: svc, Signer: b.s, Surface: core.SurfaceEmail, Prefix: "/email/act/",
		ConfirmAddress: true, Now: clock.Now, Log: zerolog.Nop()})
	// ntfy's page, under the same key as the program mounts it: it asks
	// for no address.
	mux.Handle("/ntfy/act/", &actionlink.Page{Svc: svc, Signer: b.s, Surface: core.SurfaceNtfy, Prefix: "/ntfy/act/",
		Now: clock.Now, Log: zerolog.Nop()})
	b.srv = httptest.NewServer(mux)
	t.Cleanup(b.srv.Close)
	return b
}

func (b *bridge) ask(in core.AskInput) *core.Question {
	b.t.Helper()
	in.Route, in.Agent, in.RunID, in.Reversibility = "ops", "deploy-bot", "run-1", core.HardToReverse
	q, err := b.svc.Ask(b.t.Context(), in)
	if err != nil {
		b.t.Fatal(err)
	}
	return q
}

// link is the URL of the action labelled label on q's card, for to.
func (b *bridge) link(q *core.Question, to, label string) string {
	b.t.Helper()
	view := card.New(q, core.MessageRef{Surface: core.SurfaceEmail, Room: to, Kind: core.DeliverPost})
	links, err := b.s.Links(q, view, core.SurfaceEmail, to, b.srv.URL+"/email/act/")
	if err != nil {
		b.t.Fatal(err)
	}
	for _, l := range links {
		if l.Action.Label == label {
			return l.URL
		}
	}
	b.t.Fatalf("no %q link among %+v", label, links)
	return ""
}

func call(t *testing.T, method, u string, form url.Values) (int, string) {
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
	body, _ := io.ReadAll(res.Body)
	if res.Header.Get("Referrer-Policy") != "no-referrer" || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("a page carrying a token may be cached or passed on: %v", res.Header)
	}
	return res.StatusCode, string(body)
}

func (b *bridge) state(id core.QuestionID) *core.Question {
	q, err := b.svc.Get(b.t.Context(), id)
	if err != nil {
		b.t.Fatal(err)
	}
	return q
}

func approval() core.AskInput {
	return core.AskInput{Kind: core.KindApproval, Text: "Drop the staging table?", Tool: "sql.exec",
		Arguments: []byte(`{"sql":"DROP TABLE t"}`)}
}

func TestGetNeverAnswersAndPostAnswersOnce(t *testing.T) {
	b := newBridge(t)
	q := b.ask(approval())
	u := b.link(q, alice, card.LabelApprove)
	for range 3 { // a scanner, a preview, the person
		status, body := call(t, http.MethodGet, u, nil)
		if status != 200 || !strings.Contains(body, "Confirm: Approve") || !strings.Contains(body, "Drop the staging table?") ||
			!strings.Contains(body, "Tool: sql.exec") || !strings.Contains(body, "a…@example.test") || strings.Contains(body, alice) {
			t.Fatalf("GET: %d\n%s", status, body)
		}
	}
	if got := b.state(q.ID); !got.Open() {
		t.Fatalf("a GET answered the question: %s", got.State)
	}
	status, body := call(t, http.MethodPost, u, url.Values{"address": {"Alice@Example.test "}})
	if status != 200 || !strings.Contains(body, "Recorded: Approved") {
		t.Fatalf("POST: %d\n%s", status, body)
	}
	got := b.state(q.ID)
	if got.State != core.StateAnswered || got.Resolution.Decider.Surface != core.SurfaceEmail || got.Resolution.Decider.ID != alice {
		t.Fatalf("recorded %+v", got.Resolution)
	}
	// The same link again: nothing recorded, and it says why (the
	// recipient's own answer closed it: TestDoubleTapSaysTheFirstCounted).
	status, body = call(t, http.MethodPost, u, url.Values{"address": {alice}})
	if status != http.StatusConflict || !strings.Contains(body, "Already closed") || !strings.Contains(body, "nothing more was recorded") {
		t.Fatalf("second use: %d\n%s", status, body)
	}
	// A late click shows the outcome.
	status, body = call(t, http.MethodGet, b.link(q, alice, card.LabelApprove), nil)
	if status != 200 || !strings.Contains(body, "Answered by an email recipient") || strings.Contains(body, alice) || strings.Contains(body, "<form") {
		t.Fatalf("late GET: %d\n%s", status, body)
	}
	evs := coretest.Kinds(coretest.EventsOf(t, b.svc, q.ID))
	n := 0
	for _, k := range evs {
		if k == core.EventAnswered {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("events %v: want one answer", evs)
	}
}

func TestRefusedLinksRecordNothing(t *testing.T) {
	b := newBridge(t)
	q := b.ask(approval())
	u := b.link(q, alice, card.LabelApprove)

	// Forwarded: the confirmer names another address.
	status, body := call(t, http.MethodPost, u, url.Values{"address": {carol}})
	if status != http.StatusForbidden || !strings.Contains(body, "a…@example.test") || !strings.Contains(body, "Nothing was recorded") {
		t.Fatalf("forwarded: %d\n%s", status, body)
	}
	// Altered: the recipient swapped in the URL's payload, or any byte changed.
	// One character in the middle is changed: the last ones may carry a
	// base64 encoding's unused bits, which decode to the same bytes
	// (before, "AA" in their place was such a change one run in a
	// thousand, and the link held).
	tok := strings.TrimPrefix(u, b.srv.URL+"/email/act/")
	mid, other := len(tok)/2, "A"
	if tok[mid] == 'A' {
		other = "B"
	}
	altered := b.srv.URL + "/email/act/" + tok[:mid] + other + tok[mid+1:]
	if status, body := call(t, http.MethodPost, altered, url.Values{"address": {alice}}); status != http.StatusUnauthorized || !strings.Contains(body, "changed") {
		t.Fatalf("altered: %d\n%s", status, body)
	}
	// A link for another surface is not good here.
	ntfy, _ := b.s.Sign(actionlink.Claims{Ref: core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove}, Surface: core.SurfaceNtfy, To: alice, Expires: q.Deadline})
	if status, _ := call(t, http.MethodPost, b.srv.URL+"/email/act/"+ntfy, url.Values{"address": {alice}}); status != http.StatusUnauthorized {
		t.Fatalf("an ntfy token at the email page: %d", status)
	}
	// Carol's own link: she is sent the question but may not decide.
	status, body = call(t, http.MethodPost, b.link(q, carol, card.LabelApprove), url.Values{"address": {carol}})
	if status != http.StatusForbidden || !strings.Contains(body, "not one of the people who may answer") {
		t.Fatalf("carol: %d\n%s", status, body)
	}
	// Expired: the deadline the link was sent with has passed.
	b.clock.Advance(q.Deadline.Sub(epoch))
	status, body = call(t, http.MethodPost, u, url.Values{"address": {alice}})
	if !strings.Contains(body, "Nothing") || (status != http.StatusGone && status != http.StatusConflict) {
		t.Fatalf("expired: %d\n%s", status, body)
	}
	got := b.state(q.ID)
	if got.Resolution != nil && got.Resolution.Decider.Surface == core.SurfaceEmail {
		t.Fatalf("a refused link was recorded: %+v", got.Resolution)
	}
	kinds := coretest.Kinds(coretest.EventsOf(t, b.svc, q.ID))
	for _, k := range kinds {
		if k == core.EventAnswered {
			t.Fatalf("events %v", kinds)
		}
	}
}

// TestExpiredLinkOnOpenQuestion: a link past its question's deadline
// records nothing, though the question has not been timed out yet.
func TestExpiredLinkOnOpenQuestion(t *testing.T) {
	b := newBridge(t)
	in := approval()
	in.Timeout = time.Minute
	q := b.ask(in)
	u := b.link(q, alice, "Approve")
	b.clock.Advance(time.Minute)
	status, body := call(t, http.MethodPost, u, url.Values{"address": {alice}})
	if status != http.StatusGone || !strings.Contains(body, "expired on 2026-06-01 09:01 UTC") {
		t.Fatalf("expired: %d\n%s", status, body)
	}
	if !b.state(q.ID).Open() {
		t.Fatal("an expired link answered")
	}
}

// TestLinkLastsWhileItsQuestionIsEscalated: a question escalated at its
// deadline stays open to its route's people, and so do the links they
// were sent, until the deadline the escalation set; before, those links
// said they had expired while the same person's chat buttons still
// answered.
func TestLinkLastsWhileItsQuestionIsEscalated(t *testing.T) {
	b := newBridge(t)
	in := approval()
	in.Timeout, in.OnTimeout = time.Minute, core.OnTimeoutEscalate
	q := b.ask(in)
	u := b.link(q, alice, "Approve")
	b.clock.Advance(time.Minute)
	if _, err := b.svc.Tick(b.t.Context()); err != nil {
		t.Fatal(err)
	}
	escalated := b.state(q.ID)
	if !escalated.Open() || !escalated.Deadline.After(q.Deadline) {
		t.Fatalf("after the deadline the question is %s until %s; want it escalated", escalated.State, escalated.Deadline)
	}
	status, body := call(t, http.MethodPost, u, url.Values{"address": {alice}})
	if status != http.StatusOK || b.state(q.ID).Open() {
		t.Fatalf("alice's link after the escalation: %d, open %v\n%s", status, b.state(q.ID).Open(), body)
	}
}

// TestExpiredLinkKeepsToItsSurface: an email link past its own expiry,
// whose question an escalation kept open, posted to ntfy's page (which
// asks for no address) records nothing. Before, the check of a link's
// surface was made only while it had not expired, so a forwarded email
// link answered as its recipient there, without the address that the
// email page asks for.
func TestExpiredLinkKeepsToItsSurface(t *testing.T) {
	b := newBridge(t)
	in := approval()
	in.Timeout, in.OnTimeout = time.Minute, core.OnTimeoutEscalate
	q := b.ask(in)
	u := b.link(q, alice, "Approve")
	onNtfy := strings.Replace(u, "/email/act/", "/ntfy/act/", 1)
	if status, _ := call(t, http.MethodPost, onNtfy, nil); status != http.StatusUnauthorized {
		t.Fatalf("an email link on ntfy's page: %d, want 401", status)
	}
	b.clock.Advance(time.Minute)
	if _, err := b.svc.Tick(b.t.Context()); err != nil {
		t.Fatal(err)
	}
	if status, _ := call(t, http.MethodPost, onNtfy, nil); status != http.StatusUnauthorized || !b.state(q.ID).Open() {
		t.Fatalf("an expired email link on ntfy's page after an escalation: %d, open %v; want 401 and open", status, b.state(q.ID).Open())
	}
}

func TestClarificationTakesText(t *testing.T) {
	b := newBridge(t)
	q := b.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	u := b.link(q, alice, card.LabelAnswer)
	status, body := call(t, http.MethodGet, u, nil)
	if status != 200 || !strings.Contains(body, `<textarea id="text" name="text" required>`) {
		t.Fatalf("GET: %d\n%s", status, body)
	}
	// The answer is typed here and sent: no "Reply" to send.
	if strings.Contains(body, card.LabelAnswer) || !strings.Contains(body, "Confirm: "+card.LabelSendAnswer) {
		t.Fatalf("the page's words for the answer:\n%s", body)
	}
	if status, body := call(t, http.MethodPost, u, url.Values{"address": {alice}, "text": {"  "}}); status != http.StatusBadRequest || !strings.Contains(body, "<form") {
		t.Fatalf("a blank answer: %d\n%s", status, body)
	}
	if status, body := call(t, http.MethodPost, u, url.Values{"address": {alice}, "text": {"eu-west-1 <b>"}}); status != 200 || !strings.Contains(body, "Recorded") {
		t.Fatalf("POST: %d\n%s", status, body)
	}
	if r := b.state(q.ID).Resolution; r == nil || r.Answer != "eu-west-1 <b>" {
		t.Fatalf("recorded %+v", r)
	}
}

func TestEditAndDecline(t *testing.T) {
	b := newBridge(t)
	in := approval()
	in.Editable = &core.Editable{All: true}
	q := b.ask(in)
	u := b.link(q, alice, card.LabelEditApprove)
	if _, body := call(t, http.MethodGet, u, nil); !strings.Contains(body, "DROP TABLE t") {
		t.Fatalf("the edit box does not start from the asked arguments:\n%s", body)
	}
	if status, body := call(t, http.MethodPost, u, url.Values{"address": {alice}, "text": {`{"sql":"DROP TABLE u"}`}}); status != 200 {
		t.Fatalf("edit: %d\n%s", status, body)
	}
	if r := b.state(q.ID).Resolution; r == nil || r.Edit == nil {
		t.Fatalf("recorded %+v", r)
	}
	q2 := b.ask(approval())
	if status, body := call(t, http.MethodPost, b.link(q2, alice, card.LabelDecline), url.Values{"address": {alice}}); status != 200 || !strings.Contains(body, "declined") {
		t.Fatalf("decline: %d\n%s", status, body)
	}
	if got := b.state(q2.ID); got.State != core.StateDeclined {
		t.Fatalf("state %s", got.State)
	}
}

func TestMethodsAndPaths(t *testing.T) {
	b := newBridge(t)
	req, _ := http.NewRequest(http.MethodPut, b.srv.URL+"/email/act/x.y", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") == "" {
		t.Fatalf("PUT: %d %v", res.StatusCode, res.Header)
	}
	if status, _ := call(t, http.MethodGet, b.srv.URL+"/email/act/", nil); status != http.StatusNotFound {
		t.Fatalf("no token: %d", status)
	}
}

// BenchmarkSignVerify is one link signed and checked: the work a mailed
// card does per action, and a click per use.
func BenchmarkSignVerify(b *testing.B) {
	s, _ := actionlink.NewSigner([]byte("server key of the test, 32 bytes"))
	c := actionlink.Claims{Ref: core.Ref{QuestionID: "b234567abcdefghij", Item: -1, Action: core.RefApprove},
		Surface: core.SurfaceEmail, To: alice, Expires: epoch.Add(time.Hour)}
	b.ReportAllocs()
	for b.Loop() {
		tok, err := s.Sign(c)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Verify(tok, epoch); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"alice@example.test": "a…@example.test",
		"émile@example.fr":   "é…@example.fr",
		"@example.test":      "another recipient",
		"no-at-sign":         "another recipient",
	} {
		if got := actionlink.Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}
