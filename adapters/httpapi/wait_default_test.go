package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAWaitNamingNoTimeoutEndsBeforeAProxyCutsIt: a wait that names no
// timeout (curl, any caller but the Go client) is held no longer than
// the Go client's own poll (client.DefaultPollTimeout), under the idle
// timeouts of the proxies commonly in front of the server (30 s for
// some, 60 s for most), and answers the question still open. Before, it
// was held 60 s, as long as those proxies wait: the proxy cut it, and
// the caller saw a 502 or 504 instead of the open question.
func TestAWaitNamingNoTimeoutEndsBeforeAProxyCutsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{})
		api, err := httpapi.New(svc, httpapi.Options{Tokens: tokens})
		if err != nil {
			t.Fatal(err)
		}
		q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: core.AgentID(agentA.Name), RunID: "r1",
			Text: "Which way?", Reversibility: core.Reversible})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/v1/questions/"+string(q.ID)+"/wait", nil)
		req.Header.Set("Authorization", "Bearer "+agentA.Secret)
		rec := httptest.NewRecorder()
		start := time.Now() // the bubble's clock: the wait's timer moves it
		api.ServeHTTP(rec, req)
		took := time.Since(start)
		var got client.WaitResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != http.StatusOK || err != nil || got.State != core.StateOpen {
			t.Fatalf("the wait: %d %s (%v); want 200, still open", rec.Code, rec.Body, err)
		}
		if took != client.DefaultPollTimeout {
			t.Errorf("a wait naming no timeout was held %s; want the Go client's poll, %s, under a proxy's idle timeout of 30 s", took, client.DefaultPollTimeout)
		}
	})
}
