package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// hostElicitation is one elicitation/create the host received.
type hostElicitation struct {
	ctx   context.Context
	req   *mcpsdk.ElicitRequest
	reply chan *mcpsdk.ElicitResult
}

// eliciting is a host that shows elicitations to the test; each is
// abandoned when the test's ctx ends, so a missed withdrawal fails the test
// instead of holding it up.
func eliciting(test context.Context) (*mcpsdk.ClientOptions, <-chan hostElicitation) {
	ch := make(chan hostElicitation, 4)
	return &mcpsdk.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error) {
		e := hostElicitation{ctx: ctx, req: req, reply: make(chan *mcpsdk.ElicitResult, 1)}
		ch <- e
		select {
		case r := <-e.reply:
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-test.Done():
			return nil, test.Err()
		}
	}}, ch
}

// TestMCPHostDoor: on both transports, a host that can elicit is asked as
// well as chat; the first answer wins through the chokepoint, whichever
// door it came through, and a host that declines leaves the question to
// chat.
func TestMCPHostDoor(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			b := apptest.StartBridge(t)
			copts, asked := eliciting(ctx)
			cs := tr.connect(t, ctx, b, copts)
			next := func(t *testing.T) hostElicitation {
				t.Helper()
				select {
				case e := <-asked:
					return e
				case <-ctx.Done():
					t.Fatal("the host was never asked")
					return hostElicitation{}
				}
			}
			ask := func(t *testing.T, text string) (<-chan toolCall, *client.Question, hostElicitation) {
				t.Helper()
				ch := callTool(ctx, cs, "request_clarification", map[string]any{"question": text, "reversibility": "hard_to_reverse"})
				q := parkedAs(t, ctx, b.Ops, text)
				el := next(t)
				if !strings.Contains(el.req.Params.Message, string(q.ID)) || !strings.Contains(el.req.Params.Message, text) {
					t.Fatalf("the elicitation does not show the question:\n%s", el.req.Params.Message)
				}
				return ch, q, el
			}

			t.Run("host answers first", func(t *testing.T) {
				ch, q, el := ask(t, "Which region?")
				el.reply <- &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "eu-central-1"}}
				res := toolResult(t, ctx, ch)
				fenced(t, resultText(res), fence.VerbAnswered, map[fence.Tag]string{fence.TagAnswer: "eu-central-1", fence.TagDeciderName: "agent-a"})
				sameAsWait(t, ctx, b, q.ID, res)
				rec, err := b.Ops.Get(ctx, q.ID)
				if err != nil || rec.Resolution.Decider.Surface != core.SurfaceMCP || rec.Resolution.Decider.ID != "agent-a" {
					t.Fatalf("recorded %+v, %v; want the decider {mcp, agent-a}", rec.Resolution, err)
				}
				// Chat is told the truth too: the card shows who answered,
				// and a later answer is refused naming them.
				b.Slack.Card(t, q.ID, func(c adaptertest.Card) bool { return strings.Contains(c.Text, "via mcp") })
				if _, err := b.Ops.Answer(ctx, q.ID, client.AnswerRequest{Answer: "too late"}); !isStatus(err, http.StatusConflict) || !strings.Contains(err.Error(), "mcp agent-a") {
					t.Errorf("a later API answer: %v; want 409 naming mcp agent-a", err)
				}
			})

			t.Run("chat answers while the host is asked", func(t *testing.T) {
				ch, q, el := ask(t, "Which bucket?")
				b.Slack.Reply(t, apptest.SlackAlice, b.Slack.Card(t, q.ID, nil), nil, "the shared one")
				res := toolResult(t, ctx, ch)
				fenced(t, resultText(res), fence.VerbAnswered, map[fence.Tag]string{fence.TagAnswer: "the shared one", fence.TagDeciderName: apptest.SlackAlice.Name})
				sameAsWait(t, ctx, b, q.ID, res)
				select {
				case <-el.ctx.Done(): // withdrawn with notifications/cancelled
				case <-ctx.Done():
					t.Fatal("the elicitation was not withdrawn after chat answered")
				}
			})

			t.Run("host declines", func(t *testing.T) {
				ch, q, el := ask(t, "Which queue?")
				el.reply <- &mcpsdk.ElicitResult{Action: "decline"}
				if got, err := b.Ops.Get(ctx, q.ID); err != nil || got.State != core.StateOpen {
					t.Fatalf("after the host declined the question is %+v, %v; want open", got, err)
				}
				if _, err := b.Ops.Answer(ctx, q.ID, client.AnswerRequest{Answer: "the fast one"}); err != nil {
					t.Fatal(err)
				}
				res := toolResult(t, ctx, ch)
				fenced(t, resultText(res), fence.VerbAnswered, map[fence.Tag]string{fence.TagAnswer: "the fast one", fence.TagDeciderName: "ops"})
				sameAsWait(t, ctx, b, q.ID, res)
			})
		})
	}
}
