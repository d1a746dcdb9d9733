package client_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestAskRequestCarriesEveryField: an ask made into a request and back is
// the same ask, field for field, and the sample sets every field, so a
// field added to core.AskInput fails here until both directions carry
// it. Before, the stdio MCP process copied the fields it knew of by hand
// and sent a batch without its calls.
func TestAskRequestCarriesEveryField(t *testing.T) {
	ed := core.Editable{All: true}
	in := core.AskInput{
		Kind: core.KindApproval, Agent: "agent-1", RunID: "run-1", ToolCallID: "tc-1",
		Labels: core.Labels{Project: "p", Task: "t"}, Text: "Write?", Context: "ctx",
		Reversibility: core.Reversible, Route: "ops", Options: []core.Option{{ID: "o1", Title: "One"}},
		Items: []core.FormItem{{ID: "q1", Question: "Which?"}}, Tool: "write_file", Arguments: json.RawMessage(`{"path":"/tmp/a"}`),
		Editable: &ed, Calls: []core.CallInput{{ToolCallID: "c1", Tool: "write_file", Arguments: json.RawMessage(`{}`)}},
		Timeout: time.Hour, OnTimeout: core.OnTimeoutReask, MaxReasks: 2, Quorum: 2,
		IdempotencyKey: "key-1", CallbackURL: "https://hooks.example/cb",
	}
	// Set by a door of the bridge's own, never taken from an asker.
	notSent := map[string]bool{"HostPrompt": true}
	v := reflect.ValueOf(in)
	for i := range v.NumField() {
		if notSent[v.Type().Field(i).Name] {
			continue
		}
		if v.Field(i).IsZero() {
			t.Fatalf("the sample leaves AskInput.%s unset: set it, and carry it both ways", v.Type().Field(i).Name)
		}
	}
	if got := client.AskRequestOf(in).Input(in.Agent); !reflect.DeepEqual(got, in) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, in)
	}
}
