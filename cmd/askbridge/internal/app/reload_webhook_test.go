package app_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/webhook"
	"github.com/askbridge/askbridge/core"
)

// A file reloaded to allow callbacks puts them in force everywhere at
// once: core takes the ask's callback_url, and the sender signs and sends
// it with the reloaded secret, with no restart.
func TestReloadAllowsCallbacks(t *testing.T) {
	hits := make(chan *http.Request, 4)
	bodies := make(chan []byte, 4)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hits <- r
		bodies <- b
	}))
	defer recv.Close()

	r := startBehindLink(t, nil, reloadYAML("ops-one", ""))
	in := client.AskRequest{Kind: core.KindClarification, Question: "Which region?", Reversibility: core.Reversible,
		RunID: "run-reload", Route: "deploy", CallbackURL: recv.URL + "/hooks/one"}
	if _, err := client.New(r.m.URL, reloadAgent).Ask(t.Context(), in); err == nil {
		t.Fatal("a callback was taken before any was allowed")
	}

	const secret = "reloaded-hook-secret-0123"
	r.rewrite(t, reloadYAML("ops-one", "webhooks: {allow: ['"+recv.URL+"/hooks/'], secret: "+secret+"}\n"))
	if got := reloadOf(t, reloads(t, r.m)[0]); !slices.Contains(got.Changed, "webhooks") {
		t.Errorf("the reload's changes %v do not name webhooks", got.Changed)
	}
	q, err := client.New(r.m.URL, reloadAgent).Ask(t.Context(), in)
	if err != nil {
		t.Fatalf("the reloaded allow list refused the callback: %v", err)
	}
	if status := answerAs(t, r.m.URL, reloadOpsOne, q.ID); status != http.StatusOK {
		t.Fatalf("answer: %d", status)
	}
	select {
	case req := <-hits:
		body := <-bodies
		if err := webhook.Verify([]byte(secret), req.Header, body, time.Now(), webhook.DefaultTolerance); err != nil {
			t.Fatalf("the webhook is not signed with the reloaded secret: %v", err)
		}
		if got := req.Header.Get(webhook.HeaderID); got != core.WebhookKey(q.ID) {
			t.Errorf("event id %q, want %q", got, core.WebhookKey(q.ID))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no webhook after the reload allowed it")
	}
}
