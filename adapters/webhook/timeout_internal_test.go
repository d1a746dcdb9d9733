package webhook

import (
	"net/http"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// TestGivenClientKeepsATimeout: a client handed in for its transport (a
// private CA, a proxy) and set with no Timeout of its own still bounds
// each attempt, as the default client does; a receiver that never answers
// would otherwise hold its webhook, and the ones queued behind it, until
// the replica stops. A Timeout the caller set stays.
func TestGivenClientKeepsATimeout(t *testing.T) {
	body := func(*core.Question) ([]byte, error) { return []byte(`{}`), nil }
	for _, c := range []struct {
		name   string
		client *http.Client
		want   time.Duration
	}{
		{"none given", nil, 30 * time.Second},
		{"given without a timeout", &http.Client{Transport: http.DefaultTransport}, 30 * time.Second},
		{"given with one", &http.Client{Timeout: 5 * time.Second}, 5 * time.Second},
	} {
		s, err := New(Options{Client: c.client, Body: body, Keys: &Keys{}})
		if err != nil {
			t.Fatal(err)
		}
		if s.client.Timeout != c.want {
			t.Errorf("%s: the attempts' timeout is %s, want %s", c.name, s.client.Timeout, c.want)
		}
	}
}
