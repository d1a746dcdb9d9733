package app_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestWrongTokensRunOutAtEveryDoor: the budget of wrong bearer tokens is
// one per client address across the doors that take the API's tokens:
// wrong tokens spent on /mcp leave none for the hooks or /metrics, which
// answer 429 with Retry-After, while a token already found from that
// address keeps working. Before, only /v1 and the console's sign-in
// counted, and /mcp, the hooks and /metrics took guesses without limit.
func TestWrongTokensRunOutAtEveryDoor(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	do := func(method, path, tok string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, m.URL+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := do(http.MethodGet, "/metrics", apptest.OpTok); r.StatusCode != http.StatusOK {
		t.Fatalf("metrics with the operator's token: %d", r.StatusCode)
	}
	for i := range 30 {
		if r := do(http.MethodPost, "/mcp", "not-a-token-of-ours-"+strconv.Itoa(i)); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong token %d on /mcp: %d, want 401", i, r.StatusCode)
		}
	}
	for _, path := range []string{"/mcp", "/v1/hooks/codex", "/metrics"} {
		method := http.MethodPost
		if path == "/metrics" {
			method = http.MethodGet
		}
		r := do(method, path, "not-a-token-of-ours-x")
		if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
			t.Errorf("a wrong token on %s past the budget: %d, Retry-After %q; want 429 with one", path, r.StatusCode, r.Header.Get("Retry-After"))
		}
	}
	if r := do(http.MethodGet, "/metrics", apptest.OpTok); r.StatusCode != http.StatusOK {
		t.Fatalf("metrics with the operator's token, found from here before: %d", r.StatusCode)
	}
}
