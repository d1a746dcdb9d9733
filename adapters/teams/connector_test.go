package teams

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2/clientcredentials"

	"github.com/askbridge/askbridge/core"
)

// TestAConnectorFailureNamingAWaitCarriesIt: a 5xx from the Bot Connector
// with a Retry-After stays of unknown outcome (the activity may have been
// posted) and carries the wait for core's drain to keep to; a 429's wait
// is a core.RetryAfter, nothing posted.
func TestAConnectorFailureNamingAWaitCarriesIt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/token":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"t","token_type":"Bearer","expires_in":3600}`))
		case "/v3/conversations/busy/activities":
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	c := newConnector(srv.URL, clientcredentials.Config{ClientID: "app", ClientSecret: "s", TokenURL: srv.URL + "/token"}, srv.Client())

	_, err := c.send(t.Context(), "busy", &Activity{Type: "message", Text: "hi"})
	var ra *core.RetryAfter
	var ns *core.NotSent
	if errors.As(err, &ra) || errors.As(err, &ns) {
		t.Fatalf("a 503 may come after the activity was posted; reported as not posted (%T): %v", err, err)
	}
	nw, ok := errors.AsType[interface {
		error
		RetryWait() time.Duration
	}](err)
	if !ok || nw.RetryWait() != 30*time.Second {
		t.Fatalf("a 503 naming 30s asks the drain for %v (%T: %v)", nw, err, err)
	}

	_, err = c.send(t.Context(), "limited", &Activity{Type: "message", Text: "hi"})
	if !errors.As(err, &ra) || ra.After != 7*time.Second {
		t.Fatalf("a 429 naming 7s: %T %v", err, err)
	}
}

// TestAppTokenNotFetchedIsNotSent: a call whose app token cannot be
// fetched (the token endpoint unreachable) never reached the Bot
// Connector, and says so. Before, only a token endpoint that answered
// with an error said so; one that could not be reached read as of
// unknown outcome, and the retry's card was marked as a possible repeat.
func TestAppTokenNotFetchedIsNotSent(t *testing.T) {
	var calls atomic.Int32
	connector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"1"}`))
	}))
	defer connector.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens at its address now
	c := newConnector(connector.URL, clientcredentials.Config{ClientID: "app", ClientSecret: "s", TokenURL: gone.URL + "/token"}, connector.Client())
	_, err := c.send(t.Context(), "conv", &Activity{Type: "message", Text: "hi"})
	var ns *core.NotSent
	if !errors.As(err, &ns) {
		t.Fatalf("a call without its app token: %v (%T), not reported as not sent", err, err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the Bot Connector was called %d times without a token", n)
	}
}
