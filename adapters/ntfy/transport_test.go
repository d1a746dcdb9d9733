package ntfy_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/ntfy"
	"github.com/askbridge/askbridge/adapters/ntfy/ntfyfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestTokenNotSentOverPlainHTTP: a token, or a password in the server
// URL, is refused at New when it would go over plain http to another
// machine, as every other platform's endpoint override is, unless the
// operator says the network may carry it; https, http to loopback, and
// http without a credential are taken. The refusal never shows the
// credential. Before, a token went to http://ntfy.internal in the clear.
func TestTokenNotSentOverPlainHTTP(t *testing.T) {
	const password = "pa55word-not-shown"
	for _, c := range []struct {
		name   string
		url    string
		token  string
		trust  bool
		refuse bool
	}{
		{"https with a token", "https://ntfy.example.test", token, false, false},
		{"http to 127.0.0.1 with a token", "http://127.0.0.1:8080", token, false, false},
		{"http to localhost with a token", "http://localhost:2586", token, false, false},
		{"http to ::1 with a token", "http://[::1]:2586", token, false, false},
		{"http to another machine without a credential", "http://ntfy.internal", "", false, false},
		{"http to another machine with a token", "http://ntfy.internal", token, false, true},
		{"http to another machine with a password", "http://bridge:" + password + "@ntfy.internal", "", false, true},
		{"http to a machine that only looks local", "http://localhost.example.test", token, false, true},
		{"http to another machine with a token, trusted", "http://ntfy.internal", token, true, false},
	} {
		_, err := ntfy.New(nil, ntfy.Options{ServerURL: c.url, Token: c.token, TokenOverHTTP: c.trust,
			PublicURL: "https://bridge.example.test", Key: []byte(key)})
		switch {
		case c.refuse && (err == nil || !strings.Contains(err.Error(), "in the clear")):
			t.Errorf("%s: %v, want a refusal saying the token would go in the clear", c.name, err)
		case !c.refuse && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case err != nil && (strings.Contains(err.Error(), token) || strings.Contains(err.Error(), password)):
			t.Errorf("%s: the refusal shows the credential: %v", c.name, err)
		}
	}
}

// TestRedirectIsNotFollowed: a server URL that redirects the publish is
// refused for good, naming where it points, and the place it points to
// is never sent anything. Before, Go's client followed: a 308 took the
// bearer token on to whatever the same host named (http included), and
// a 301 turned the POST into a GET, so nothing was published and the
// page it reached read as a publish that named no message.
func TestRedirectIsNotFollowed(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		var reached atomic.Int32
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"elsewhere","event":"message"}`))
		}))
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/moved?auth=x", status)
		}))
		// No service, so no service's clock: the refusal is read by the
		// wall clock given here.
		a, err := ntfy.New(nil, ntfy.Options{ServerURL: redirector.URL, Token: token, PublicURL: "https://bridge.example.test",
			Key: []byte(key), Now: time.Now, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Post(t.Context(), openApproval("Deploy?", `{"env":"prod"}`), core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost})
		var perm *core.Permanent
		if !errors.As(err, &perm) || !strings.Contains(err.Error(), target.URL+"/moved") || strings.Contains(err.Error(), "auth=x") {
			t.Errorf("%d: %v; want a refusal for good naming %s/moved without its query", status, err, target.URL)
		}
		if n := reached.Load(); n != 0 {
			t.Errorf("%d: the place redirected to was sent %d requests", status, n)
		}
		redirector.Close()
		target.Close()
	}
}

// openApproval is an open approval of shell.run with args.
func openApproval(text, args string) *core.Question {
	return &core.Question{ID: "b234567abcdefghij", Kind: core.KindApproval, State: core.StateOpen, Text: text,
		Call: &core.ToolCall{Tool: "shell.run", Arguments: []byte(args)}, Reversibility: core.HardToReverse, Deadline: time.Now().Add(time.Hour)}
}

// TestPublishWithinNtfysBodyLimit: ntfy refuses a JSON publish of
// ntfyfake.MaxJSONBody bytes or more, however short its message. A
// question about markup or a shell command ("<", ">", "&") is published
// whole, with its one-tap buttons: those characters go unescaped. One
// whose message would still make too large a body (quotes and
// backslashes take two bytes each) is published cut, from the end, and
// its buttons open their pages, which show it whole. Before, both were
// refused with 413 and given up.
func TestPublishWithinNtfysBodyLimit(t *testing.T) {
	e := newEnv(t, token)
	post := func(q *core.Question) ntfyfake.Message {
		t.Helper()
		before := len(e.fake.Messages(topic))
		if _, err := e.a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost}); err != nil {
			t.Fatalf("not published: %v", err)
		}
		return e.fake.Messages(topic)[before]
	}
	oneTap := func(m ntfyfake.Message) bool {
		for _, a := range m.Actions {
			if a.Action == "http" {
				return true
			}
		}
		return false
	}

	markup := strings.Repeat(`<b>&amp;</b>`, 100)
	script := strings.Repeat(`x<&>y;`, 150)
	q := openApproval(markup, `{"cmd":"`+script+`"}`)
	q.Context = markup
	m := post(q)
	if !strings.Contains(m.Message, markup[:120]) || !strings.Contains(m.Message, script) {
		t.Errorf("the markup, or the whole command, is not in the message:\n%.400s", m.Message)
	}
	if !oneTap(m) {
		t.Errorf("a question shown whole lost its one-tap buttons: %+v", m.Actions)
	}

	decision := func(filler string) *core.Question {
		q := &core.Question{ID: "b234567abcdefghij", Kind: core.KindDecision, State: core.StateOpen, Text: filler,
			Context: filler, Reversibility: core.HardToReverse, Deadline: time.Now().Add(time.Hour)}
		for i := range 10 {
			q.Options = append(q.Options, core.Option{ID: fmt.Sprint("o", i), Title: fmt.Sprintf("Option %d %s", i, filler[:60]), Writeup: filler})
		}
		return q
	}
	// The same decision in letters takes no more room in JSON than in
	// the message: it is cut only to ntfy's message limit, and its
	// choices answer at once.
	plain := post(decision(strings.Repeat("ab", 150)))
	if !oneTap(plain) || len(plain.Message) < ntfy.MaxMessage-8 {
		t.Fatalf("the decision in letters: %d bytes, buttons %+v; want it cut only to the message limit, with one-tap buttons", len(plain.Message), plain.Actions)
	}
	m = post(decision(strings.Repeat(`"\`, 150)))
	if len(m.Message) >= len(plain.Message) || !strings.HasSuffix(m.Message, "…") {
		t.Errorf("the message (%d bytes) was not cut further to fit:\n%.200s", len(m.Message), m.Message)
	}
	if !strings.HasPrefix(m.Message, card.HardToReverseMarker+"\n"+`"\"\`) {
		t.Errorf("the question's start is not kept:\n%.200s", m.Message)
	}
	if oneTap(m) {
		t.Errorf("a message cut to fit kept a one-tap button: %+v", m.Actions)
	}
	if len(m.Actions) == 0 {
		t.Errorf("a message cut to fit lost its buttons")
	}
}
