package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/adapters/httpapi"
)

// TestNullBodyIsRefused: a body of JSON null is not an empty body. Before,
// it decoded to nothing at all and each route went on as if no body had
// been sent: an ask or an answer was refused for a missing field rather
// than for its body, and a cancel or an end of a run went through. Each
// is now a 400 that names the body, and nothing changes.
func TestNullBodyIsRefused(t *testing.T) {
	e := newEnv(t)
	id := string(e.ask(agentA, "run-null"))
	for _, c := range []struct {
		name, path, body string
		tok              *httpapi.Token
	}{
		{"an ask", "/v1/questions", "null", &agentA},
		{"an ask with space around", "/v1/questions", " \n null \t", &agentA},
		{"an answer", "/v1/questions/" + id + "/answer", "null", &operator},
		{"an answer through the MCP door", "/v1/questions/" + id + "/mcp/answer", "null", &agentA},
		{"an end of the run", "/v1/runs/run-null/end", "null", &agentA},
		{"a cancel", "/v1/questions/" + id + "/cancel", "null", &agentA},
	} {
		before := snapshot(t, e.store)
		r := e.do("POST", c.path, c.tok, c.body)
		if r.status != http.StatusBadRequest || !strings.Contains(errorOf(t, r).Message, "must be a JSON object, not a JSON null") {
			t.Errorf("%s with a null body: %d %s; want a 400 saying the body must be a JSON object", c.name, r.status, r.body)
		}
		if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
			t.Errorf("%s with a null body changed the store (-before +after):\n%s", c.name, d)
		}
	}
	// The optional bodies still take none, and an empty object.
	if r := e.do("POST", "/v1/questions/"+id+"/cancel", &agentA, "{}"); r.status != http.StatusOK {
		t.Errorf("a cancel with {}: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/runs/run-null/end", &agentA, ""); r.status != http.StatusOK {
		t.Errorf("an end of the run with no body: %d %s", r.status, r.body)
	}
}
