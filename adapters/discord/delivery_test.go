package discord

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
)

// TestBadGatewayIsOneAttemptOfUnknownOutcome: Discord may answer 502 after
// it made the message. The SDK must not send it again on its own (that
// second copy would be recorded as the card and the first never edited);
// the post is tried once and comes back of unknown outcome, so the
// outbox's retry is flagged as a possible repeat (law 4).
func TestBadGatewayIsOneAttemptOfUnknownOutcome(t *testing.T) {
	var mu sync.Mutex
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/channels/1/messages") {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		posts++
		n := posts
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			// The message was made; the answer was lost on the way.
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, `<html>502 Bad Gateway</html>`)
			return
		}
		io.WriteString(w, `{"id":"900000000000000002","channel_id":"1","content":""}`)
	}))
	t.Cleanup(srv.Close)
	a, err := New(nil, Options{Token: "Bot t", APIURL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "a", Text: "?", State: core.StateOpen}
	ref, err := a.Post(context.Background(), q, core.MessageRef{Room: "1", Kind: core.DeliverPost})
	mu.Lock()
	n := posts
	mu.Unlock()
	if n != 1 {
		t.Errorf("the SDK sent the message %d times; want 1 (the outbox retries, flagged)", n)
	}
	if err == nil {
		t.Fatalf("a 502 was reported as posted: %+v", ref)
	}
	var ns *core.NotSent
	var ra *core.RetryAfter
	var perm *core.Permanent
	if errors.As(err, &ns) || errors.As(err, &ra) || errors.As(err, &perm) {
		t.Fatalf("a 502 is of unknown outcome, not %T: %v", errors.Unwrap(err), err)
	}
}

// TestDMChannelBadGatewayIsNotSent: a post into a person's DM room opens
// the DM channel first, and only then makes the message. A 502 on the
// opening (the SDK no longer sends it again) comes before any message was
// made, so the post sent nothing: its retry is a first post, not flagged
// as a possible repeat.
func TestDMChannelBadGatewayIsNotSent(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, `<html>502 Bad Gateway</html>`)
	}))
	t.Cleanup(srv.Close)
	a, err := New(nil, Options{Token: "Bot t", APIURL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "a", Text: "?", State: core.StateOpen}
	_, err = a.Post(context.Background(), q, core.MessageRef{Room: core.DMRoom(alice.ID), Kind: core.DeliverPost})
	mu.Lock()
	defer mu.Unlock()
	for _, c := range calls {
		if strings.HasSuffix(c, "/messages") {
			t.Fatalf("a message was sent after the DM channel failed to open: %v", calls)
		}
	}
	var ns *core.NotSent
	if !errors.As(err, &ns) {
		t.Fatalf("a 502 opening the DM channel: %v (%T); want not sent (no message was made)", err, err)
	}
}

// TestBotWideBudgetSpentPerRequest: Discord's 50 requests a second is
// per bot, so it is a budget every replica spends from, once for each
// REST request a delivery makes: a DM's post opens the DM channel first,
// and spends twice.
func TestBotWideBudgetSpentPerRequest(t *testing.T) {
	a := &Adapter{}
	allOf := func(as []core.Allowance) int {
		n := 0
		for _, x := range as {
			if x.Key == "discord:all" {
				if x.Limit.Rate != 50 || x.Limit.Per != time.Second {
					t.Errorf("discord:all limit %+v; want 50 a second", x.Limit)
				}
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		d    core.Delivery
		want int
	}{
		{core.Delivery{Kind: core.DeliverPost, Room: roomID}, 1},
		{core.Delivery{Kind: core.DeliverRemind, Room: roomID}, 1},
		{core.Delivery{Kind: core.DeliverUpdate, Message: &core.MessageRef{Room: roomID, ID: "9"}}, 1},
		{core.Delivery{Kind: core.DeliverPost, Room: core.DMRoom(alice.ID)}, 2},
		{core.Delivery{Kind: core.DeliverRemind, Room: core.DMRoom(alice.ID)}, 2},
	} {
		if got := allOf(a.Budgets(c.d)); got != c.want {
			t.Errorf("%s to %q spends discord:all %d times; want %d", c.d.Kind, c.d.Room, got, c.want)
		}
	}

	budget := &adaptertest.CountingBudget{}
	r := newRig(t, rigOptions{budget: budget, people: map[string]core.Person{
		"alice": {Name: "alice", IDs: map[core.Surface][]string{core.SurfaceDiscord: {alice.ID}}, DM: true},
	}})
	for range 3 {
		r.ask(decisionInput())
	}
	r.drained()
	requests := 0
	for _, c := range r.fake.Calls() {
		if !strings.HasPrefix(c.Path, "interactions/") && !strings.HasPrefix(c.Path, "gateway") {
			requests++
		}
	}
	if requests != 9 { // per question: the room's card, the DM's channel and card
		t.Errorf("%d REST requests; want 9: %+v", requests, r.fake.Calls())
	}
	if got := budget.Count("discord:all"); got != requests {
		t.Errorf("discord:all spent %d times for %d REST requests", got, requests)
	}
}
