package mcp_test

import (
	"context"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// chatTakesAnItem lets chat answer the form's first item just before the
// host's reply reaches core, as happens when both answer at once.
type chatTakesAnItem struct {
	mcp.ServiceBackend
	first chan struct{} // closed once chat has answered
}

func (b chatTakesAnItem) AnswerInHost(ctx context.Context, in core.AnswerInput) error {
	select {
	case <-b.first:
	default:
		close(b.first)
		if _, err := b.Svc.Answer(ctx, core.AnswerInput{QuestionID: in.QuestionID, Decider: operator,
			Items: []core.ItemInput{{ItemID: "q1", OptionID: "o1"}}}); err != nil {
			return err
		}
	}
	return b.ServiceBackend.AnswerInHost(ctx, in)
}

var twoItems = map[string]any{"reversibility": "reversible", "questions": []map[string]any{
	{"question": "Which logger?", "options": []map[string]any{{"label": "slog"}, {"label": "zerolog"}}},
	{"question": "Package name?", "options": []map[string]any{{"label": "ab"}, {"label": "askbridge"}}},
}}

// TestHostFormReplyKeepsWhatChatLeft: chat answers one item of a form
// while the host's user fills in the whole form; the host's answers to
// the other items are recorded, the item chat answered keeps chat's
// answer, and the host is told which of its answers was not recorded.
// Before, the whole reply was refused for the one item.
func TestHostFormReplyKeepsWhatChatLeft(t *testing.T) {
	copts, asked := elicitor(t)
	e, told := toldEnv(t, copts, func(b mcp.ServiceBackend) mcp.Backend {
		return chatTakesAnItem{ServiceBackend: b, first: make(chan struct{})}
	})
	ch := e.call(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolQuestions, Arguments: twoItems})
	el := nextElicitation(t, e.ctx, asked)
	q := e.parked()
	el.reply <- &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"q1": "o2", "q2": "o2"}}

	result(t, e.ctx, ch)
	got, err := e.svc.Get(e.ctx, q.ID)
	if err != nil || got.State != core.StateAnswered {
		t.Fatalf("the form: %+v, %v; want it answered", got, err)
	}
	for _, a := range got.Answers {
		want := map[string]core.Surface{"q1": operator.Surface, "q2": core.SurfaceMCP}[a.ItemID]
		if a.Decider.Surface != want {
			t.Errorf("item %s answered on %s, want %s", a.ItemID, a.Decider.Surface, want)
		}
	}
	select {
	case msg := <-told:
		if !strings.Contains(msg, `not those to "Which logger?"`) || strings.Contains(msg, "Package name?") {
			t.Errorf("the host was told %q", msg)
		}
	case <-e.ctx.Done():
		t.Fatal("the host was not told which answer was not recorded")
	}
}
