package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store/bolt"
)

// exampleService is a bridge's core on an embedded store in a temporary
// directory, with one route posted to a Slack channel where two people
// may decide.
func exampleService() (*core.Service, func()) {
	dir, err := os.MkdirTemp("", "core-example")
	if err != nil {
		panic(err)
	}
	st, err := bolt.Open(filepath.Join(dir, "askbridge.db"), bolt.Options{})
	if err != nil {
		panic(err)
	}
	svc, err := core.New(st, core.Config{
		ActorKey: []byte("example actor key"),
		Routes: map[string]core.Route{"ops": {
			Rooms:    []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1", "U2"}},
		}},
	}, core.NewSimClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)))
	if err != nil {
		panic(err)
	}
	return svc, func() { _ = st.Close(); _ = os.RemoveAll(dir) }
}

func askApproval(ctx context.Context, svc *core.Service) *core.Question {
	q, err := svc.Ask(ctx, core.AskInput{
		Kind: core.KindApproval, Agent: "deploy-bot", RunID: "run-7", Route: "ops",
		Text: "Deploy release 4.2 to production?", Reversibility: core.HardToReverse,
		Tool: "deploy", Arguments: json.RawMessage(`{"env": "prod", "release": "4.2"}`),
	})
	if err != nil {
		panic(err)
	}
	return q
}

// A click, as every chat adapter handles it: the button's value is a Ref,
// resolved against the stored question; core decides who may answer and
// records exactly one outcome, and a late click is told who won.
func Example_click() {
	svc, cleanup := exampleService()
	defer cleanup()
	ctx := context.Background()
	q := askApproval(ctx, svc)

	// The card's Approve button carries this value and nothing else.
	value := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove}.Encode()

	click := func(who core.Decider) error {
		ref, err := core.DecodeRef(value)
		if err != nil {
			return err
		}
		q, err := svc.Get(ctx, ref.QuestionID)
		if err != nil {
			return err
		}
		in, err := core.AnswerFor(q, ref, who, "")
		if err != nil {
			return err
		}
		out, err := svc.Answer(ctx, in)
		if err == nil {
			fmt.Println("closed:", out.Closed, "as", out.Question.State, "by", out.Question.Resolution.Decider.Name)
		}
		return err
	}

	mallory := core.Decider{Surface: core.SurfaceSlack, ID: "U9", Name: "Mallory"}
	err := click(mallory)
	fmt.Println("a stranger:", core.ErrorCode(err))

	alice := core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "Alice"}
	if err := click(alice); err != nil {
		panic(err)
	}

	bob := core.Decider{Surface: core.SurfaceSlack, ID: "U2", Name: "Bob"}
	err = click(bob)
	fmt.Println("too late:", errors.Is(err, core.ErrClosed), core.ErrorCode(err))

	// Output:
	// a stranger: forbidden
	// closed: true as answered by Alice
	// too late: true conflict
}
