package hooks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/fence"
)

// TestDoorWithdrawalIsAskbridges: the door's own withdrawal of its
// question (its wait ran out, askbridge is stopping, its caller went
// away) is recorded as askbridge's (law 12): the card reads "Withdrawn by
// askbridge (why)", the resume tells the agent askbridge withdrew it, and
// the close came from the system, not the agent. Before, the door
// withdrew as the agent it asks for, so every card read "Withdrawn by the
// agent …, saying 'askbridge is stopping…'" and the resume said the
// agent had withdrawn it.
func TestDoorWithdrawalIsAskbridges(t *testing.T) {
	for _, c := range []struct {
		name string
		why  string // what the card must say askbridge withdrew it for
		end  func(t *testing.T, d *door) core.QuestionID
	}{
		{"its wait ran out", "no answer in time", func(t *testing.T, d *door) core.QuestionID {
			c := d.start(t.Context(), "/v1/hooks/codex?wait=1ms", hookFixture(t, "codex/permission-request.network.json"))
			c.body(t)
			return c.id
		}},
		{"askbridge is stopping", "askbridge is stopping", func(t *testing.T, d *door) core.QuestionID {
			c := d.start(t.Context(), "/v1/hooks/claude-code", hookFixture(t, "claude-code/permission-request.bash.json"))
			d.stop()
			c.body(t)
			return c.id
		}},
		{"its caller went away", hooks.ReasonHostStopped, func(t *testing.T, d *door) core.QuestionID {
			ctx, cancel := context.WithCancel(t.Context())
			c := d.start(ctx, "/v1/hooks/claude-code", hookFixture(t, "claude-code/permission-request.bash.json"))
			return d.withdrawn(c, cancel).ID
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDoor(t)
			q, err := d.svc.Get(t.Context(), c.end(t, d))
			if err != nil || q.State != core.StateCancelled {
				t.Fatalf("question %+v, %v; want it withdrawn", q, err)
			}
			line := card.OutcomeLine(q)
			if !strings.HasPrefix(line, "Withdrawn by askbridge (") || !strings.Contains(line, "("+c.why) || strings.Contains(line, "agent") {
				t.Errorf("card outcome %q; want it withdrawn by askbridge (%s…), naming no agent", line, c.why)
			}
			if s := core.ClosingSurface(q); s != core.SurfaceSystem {
				t.Errorf("closed from %q; want the system: askbridge withdrew it", s)
			}
			res, err := core.ResumeOf(q)
			if err != nil {
				t.Fatal(err)
			}
			p, err := fence.ParseResume(res.Text)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(p.Lines, "\n")
			if !strings.HasPrefix(p.Lines[1], "askbridge itself withdrew this question") || strings.Contains(text, "the asking agent did") ||
				strings.Contains(text, "The asking agent withdrew") {
				t.Errorf("resume says\n%s\nwant it to say askbridge withdrew it, not the agent", text)
			}
		})
	}
}
