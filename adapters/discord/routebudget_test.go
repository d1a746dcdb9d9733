package discord

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
)

// TestRouteWaitGivesSharedSendsBack: a delivery handed back for its
// route's wait (takeRoute) sent nothing, so the drain gives back every
// send it spent for it from the budgets all replicas share (Budgets):
// the bot's and the room's, twice the bot's for a DM opened. Before, they
// stayed spent: each such hand-back lowered the bot's rate for every
// room, on every replica, as if a request had gone out (and while the
// DM opening's route waited, every person's DM room spent so). A post
// into a DM channel opened for it made a request, the opening: that
// call keeps what it spent.
func TestRouteWaitGivesSharedSendsBack(t *testing.T) {
	dm := map[string]core.Person{"alice": {Name: "alice", IDs: map[core.Surface][]string{core.SurfaceDiscord: {alice.ID}}, DM: true}}
	for name, tc := range map[string]struct {
		rooms  []string
		people map[string]core.Person
		path   func(r *rig) string // the route the 429 leaves with no requests
		// opens is how many requests a card makes before the one on
		// that route: a DM channel's opening.
		opens int
		// kept is what the card handed back keeps: of the bot's sends
		// and its room's.
		kept, keptRoom int
	}{
		"room":    {path: func(*rig) string { return "channels/" + roomID + "/messages" }},
		"dm":      {rooms: []string{}, people: dm, path: func(*rig) string { return "users/@me/channels" }},
		"dm post": {rooms: []string{}, people: dm, path: dmPosts, opens: 1, kept: 2, keptRoom: 1},
	} {
		t.Run(name, func(t *testing.T) {
			budget := &refundCount{}
			r := newRig(t, rigOptions{budget: budget, rooms: tc.rooms, people: tc.people})
			r.ask(decisionInput())
			r.drained()
			// A card whose request Discord answers with the route's 429:
			// sent, and spent.
			r.fake.Fail(http.MethodPost, tc.path(r), http.StatusTooManyRequests, route429Body, route429)
			sent := len(r.fake.Calls())
			r.ask(decisionInput())
			if !r.fake.WaitFor(10*time.Second, func() bool { return len(r.fake.Calls()) == sent+tc.opens+1 }) {
				t.Fatal("the card Discord answers with a 429 was never sent")
			}
			sent = len(r.fake.Calls())
			spent := budget.Count("discord:all")
			all, rooms := budget.net("discord:all")+tc.kept, budget.netRooms()+tc.keptRoom
			// The next card, on the route with no requests left.
			r.ask(decisionInput())
			if !r.fake.WaitFor(5*time.Second, func() bool {
				return budget.Count("discord:all") > spent && budget.net("discord:all") == all && budget.netRooms() == rooms
			}) {
				t.Fatalf("a card handed back for its route's wait kept %d of the bot's sends and %d of its room's; want %d and %d",
					budget.net("discord:all")-all+tc.kept, budget.netRooms()-rooms+tc.keptRoom, tc.kept, tc.keptRoom)
			}
			if n := len(r.fake.Calls()) - sent; n != tc.opens {
				t.Fatalf("%d requests went out for a card on a route with none left; want %d", n, tc.opens)
			}
		})
	}
}

// dmPosts is the route of posts into the DM channel opened for Alice.
func dmPosts(r *rig) string {
	for _, c := range r.fake.Calls() {
		if c.Method == http.MethodPost && strings.HasPrefix(c.Path, "channels/") {
			return c.Path
		}
	}
	r.t.Fatal("no card was posted into the DM channel")
	return ""
}

var _ core.Refunder = (*refundCount)(nil)

// refundCount is a shared send budget that always has a send and takes
// sends back (core.Refunder), counting both for each key.
type refundCount struct {
	adaptertest.CountingBudget
	mu   sync.Mutex
	back map[string]int
}

func (b *refundCount) Refund(_ context.Context, key string, _ core.Limit) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.back == nil {
		b.back = map[string]int{}
	}
	b.back[key]++
	return nil
}

// net is how many sends key has spent and not had back.
func (b *refundCount) net(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Count(key) - b.back[key]
}

// netRooms is net for every room's budget together.
func (b *refundCount) netRooms() int {
	return b.net("discord:channel:"+roomID) + b.net("discord:channel:"+core.DMRoom(alice.ID))
}
