package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/webhook"
)

// A Go receiver checks each webhook with Verify before it trusts the
// body, then processes each event id once.
func ExampleVerify() {
	key := []byte("the secret webhooks.secret_env names")
	seen := map[string]bool{} // a real receiver keeps this in its database
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(key, r.Header, body, time.Now(), webhook.DefaultTolerance); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		if id := r.Header.Get(webhook.HeaderID); !seen[id] {
			seen[id] = true
			fmt.Println("processing", id)
		}
	})

	// A webhook as askbridge sends it, signed now, arriving twice; then
	// the same request replayed ten minutes later.
	body := `{"question_id":"q1","state":"answered"}`
	h := signed(string(key), "q1/closed", time.Now(), []byte(body))
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(body))
		req.Header = h.Clone()
		handler.ServeHTTP(httptest.NewRecorder(), req)
	}
	err := webhook.Verify(key, h, []byte(body), time.Now().Add(10*time.Minute), webhook.DefaultTolerance)
	fmt.Println(err != nil)
	// Output:
	// processing q1/closed
	// true
}

// A receiver checks each webhook with VerifyTarget, for the callback URL
// it gave askbridge, before it trusts the body; a request signed for
// another receiver of the same secret is refused.
func ExampleVerifyTarget() {
	key := []byte("the secret webhooks.secret_env names")
	const mine = "https://hooks.example.com/askbridge/agent-a"
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.VerifyTarget(key, mine, r.Header, body, time.Now(), webhook.DefaultTolerance); err != nil {
			fmt.Println("refused:", err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		fmt.Println("processing", r.Header.Get(webhook.HeaderID))
	})

	// One webhook sent to this receiver, and one sent to another that
	// shares the secret, replayed here.
	body := `{"question_id":"q1","state":"answered"}`
	for _, target := range []string{mine, "https://hooks.example.com/askbridge/agent-b"} {
		req := httptest.NewRequest(http.MethodPost, "/askbridge/agent-a", strings.NewReader(body))
		req.Header = signedFor(string(key), "q1/closed", target, time.Now(), []byte(body))
		handler.ServeHTTP(httptest.NewRecorder(), req)
	}
	// Output:
	// processing q1/closed
	// refused: webhook: the signature does not match
}
