package slack

import (
	"testing"

	"github.com/askbridge/askbridge/internal/coretest"
)

// TestWebAPICallsHaveATimeout: with no client given, the adapter's Web API
// calls (posts, edits, Socket Mode's connection open) go through a client
// with a timeout; the SDK's default has none, so a call never answered
// held the delivery batch it was in forever.
func TestWebAPICallsHaveATimeout(t *testing.T) {
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{})
	a, err := New(svc, Options{BotToken: "xoxb-1", SigningSecret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if c := a.opts.HTTPClient; c == nil || c.Timeout != DefaultHTTPTimeout {
		t.Fatalf("the Web API's client: %+v; want a timeout of %v", c, DefaultHTTPTimeout)
	}
}
