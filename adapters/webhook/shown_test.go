package webhook_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// refusingTransport fails every request as a network error would.
type refusingTransport struct{}

func (refusingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}

// A receiver's token in the callback URL's query never reaches the
// delivery's error (logged) or the undelivered event (the event log,
// which people with a read token see): both show the URL without it, and
// without its path past the first segment (core.ShownURL).
func TestWebhookErrorsHideTheQuery(t *testing.T) {
	const token = "s3cret-receiver-token"
	recv := newReceiver(t, status(http.StatusBadGateway))
	st := coretest.OpenStore(t)
	r := newRig(t, st, recv, core.NewSimClock(time.Now().UTC()))
	id := r.ask(t, recv.url()+"run-1?token="+token)
	r.answer(t, id)
	q, err := r.svc.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	d := core.Delivery{Key: core.WebhookKey(id), Kind: core.DeliverWebhook, Surface: core.SurfaceWebhook,
		Room: q.CallbackURL, QuestionID: id, CreatedAt: time.Now()}

	shown := recv.url() + "…" // recv.url() is the receiver's first path segment
	err = r.sender(t, &http.Client{Transport: refusingTransport{}}).Call(t.Context(), q, d)
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), shown) {
		t.Fatalf("the network error is %v: want it to name the URL without its query", err)
	}

	r.svc.Attempted(t.Context(), d, err, true) // given up: the event log records it
	var seen int
	for _, ev := range coretest.EventsOf(t, st, id) {
		if ev.Kind != core.EventUndelivered {
			continue
		}
		seen++
		if strings.Contains(ev.Reason, token) || strings.Contains(string(ev.Payload), token) {
			t.Fatalf("the undelivered event shows the token: %q %s", ev.Reason, ev.Payload)
		}
		if !strings.Contains(string(ev.Payload), shown) {
			t.Fatalf("the undelivered event does not name the receiver: %s", ev.Payload)
		}
	}
	if seen != 1 {
		t.Fatalf("%d undelivered events, want 1", seen)
	}
}

// TestRefusedRedirectsNameTheReceiver: a redirect the sender does not
// follow is given up at once, and its error (logged, and the undelivered
// event's reason) names the receiver as core.ShownURL shows the callback
// URL, and nothing of the Location past that. Before, a 302 to a
// relative Location was named ":///hooks/…", which names no receiver
// (the client quotes a Location as it came); and a 307 whose Location
// does not parse was retried, with the Location quoted whole, path and
// query, where a receiver keeps its tokens.
func TestRefusedRedirectsNameTheReceiver(t *testing.T) {
	const token = "s3cret-receiver-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hooks/found":
			w.Header().Set("Location", "/hooks/moved/"+token+"?token="+token)
			w.WriteHeader(http.StatusFound)
		case "/hooks/garbled":
			w.Header().Set("Location", "/hooks/moved/"+token+"/%zz?token="+token)
			w.WriteHeader(http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	s := plainSender(t, srv.URL+"/hooks/")
	shown := srv.URL + "/hooks/…"
	for _, path := range []string{"/hooks/found", "/hooks/garbled"} {
		err := call(t, s, srv.URL+path+"?token="+token)
		var perm *core.Permanent
		if !errors.As(err, &perm) || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), shown) {
			t.Errorf("%s: %v; want a permanent refusal naming %s, without the token", path, err, shown)
		}
	}
}
