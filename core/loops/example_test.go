package loops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/store/bolt"
)

// exampleService is a bridge's core on an embedded store in a temporary
// directory, with one route posted to a Slack channel, holding one open
// approval.
func exampleService() (*core.Service, *core.Question, func()) {
	dir, err := os.MkdirTemp("", "loops-example")
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
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
		}},
	}, core.NewSimClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)))
	if err != nil {
		panic(err)
	}
	q, err := svc.Ask(context.Background(), core.AskInput{
		Kind: core.KindApproval, Agent: "deploy-bot", RunID: "run-7", Route: "ops",
		Text: "Deploy release 4.2 to production?", Reversibility: core.HardToReverse,
		Tool: "deploy", Arguments: json.RawMessage(`{"env": "prod", "release": "4.2"}`),
	})
	if err != nil {
		panic(err)
	}
	return svc, q, func() { _ = st.Close(); _ = os.RemoveAll(dir) }
}

// printCourier stands in for a chat platform: it prints what it is asked
// to do.
type printCourier struct{ posted func() }

func (printCourier) Surface() core.Surface { return core.SurfaceSlack }

func (c printCourier) Post(_ context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	fmt.Printf("%s %s in %s: %s\n", card.Kind, q.Kind, card.Room, q.Text)
	c.posted()
	card.ID = "1714564800.000100"
	return card, nil
}

func (printCourier) Update(_ context.Context, q *core.Question, card core.MessageRef) error {
	fmt.Println("update", card.ID, "to", q.State)
	return nil
}

func (printCourier) Remind(_ context.Context, q *core.Question, room string) error {
	fmt.Println("remind in", room)
	return nil
}

func (printCourier) Digest(_ context.Context, d core.Digest, room string) error {
	fmt.Println("digest in", room, len(d.Open), "open")
	return nil
}

// The outbox side of an adapter: Deliver hands each delivery to the
// platform's Courier and records the posted card, so it can be edited
// once the question closes, on any replica.
func ExampleDeliver() {
	svc, q, cleanup := exampleService()
	defer cleanup()

	ctx, stop := context.WithCancel(context.Background())
	_ = loops.Deliver(ctx, svc, printCourier{posted: stop}, loops.DeliverOptions{Consumer: "example"})

	q, _ = svc.Get(context.Background(), q.ID)
	fmt.Println("cards recorded:", len(q.Messages), q.Messages[0].Room)

	// Output:
	// post approval in C1: Deploy release 4.2 to production?
	// cards recorded: 1 C1
}
