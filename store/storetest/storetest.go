// Package storetest is the one conformance suite every core.Store must
// pass. A store's own test calls Run with a Harness; the suite is black-box
// and speaks only core's interfaces, so the embedded store and the Redis
// store are held to exactly the same behaviour. Most cases drive the store
// through core.Service, the way the bridge does, so the suite also proves
// that the chokepoint and the store agree.
//
// Run holds what a store promises: atomic creates and commits, the
// compare-and-set of a change against the version it was computed from,
// exactly once under races across replicas, replay safety, ordering of
// events and deliveries, durability across a reopen, the outbox, values
// and leases, the indexes and queries. RunDomain holds the behaviours of
// the close that core alone decides (each kind's and feature's rules and
// wording through the chokepoint); since a store only writes core's
// change, core runs them (TestChokepoint) on the embedded store, and the
// stores do not run them again. core's next_test.go holds the rules
// themselves as a table.
package storetest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// Harness opens stores for the suite.
type Harness struct {
	// Open returns a fresh, empty store. The suite closes it.
	Open func(t *testing.T) core.Store
	// Reopen closes s and opens the same data again, as a restart would.
	Reopen func(t *testing.T, s core.Store) core.Store
	// Replica, when set, opens another store on s's data with a
	// connection of its own, as another replica of the bridge would; the
	// suite closes neither. Nil means replicas share s (a store one
	// process holds alone).
	Replica func(t *testing.T, s core.Store) core.Store
	// Clocked opens a fresh, empty store, as Open does, whose outbox
	// keeps its due times (retries, delayed deliveries) on now, so that
	// the suite makes deliveries fall due by moving a simulated clock.
	Clocked func(t *testing.T, now func() time.Time) core.Store
}

// Run runs every store promise of the suite as a subtest.
func Run(t *testing.T, h Harness) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// RunDomain runs the behaviours of the close that core decides, through
// core.Service on the store h opens, as subtests.
func RunDomain(t *testing.T, h Harness) {
	t.Helper()
	for _, c := range domainCases {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, h Harness)
}

// cases and domainCases are filled by each file of the suite in its init,
// so a behaviour and its helpers live together.
var cases, domainCases []testCase

// register adds a store promise.
func register(name string, run func(t *testing.T, h Harness)) {
	cases = append(cases, testCase{name, run})
}

// registerDomain adds a behaviour of the close that core alone decides.
func registerDomain(name string, run func(t *testing.T, h Harness)) {
	domainCases = append(domainCases, testCase{name, run})
}

// epoch is where every simulated clock starts.
var epoch = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// Routes every case runs with: a default route answerable through the API,
// a chat route posted to Slack and Telegram that escalates to a Discord
// on-call route.
func routes() map[string]core.Route {
	return map[string]core.Route{
		core.DefaultRoute: {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}},
		"ops": {
			Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}, {Surface: core.SurfaceTelegram, ID: "-1001"}},
			Deciders: map[core.Surface][]string{
				core.SurfaceSlack: {"U1", "role:S-leads"},
				core.SurfaceAPI:   {"*"},
			},
			EscalateTo:    "oncall",
			StandingHours: 8,
		},
		// strict forbids standing approvals.
		"strict": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, Standing: new(bool)},
		"oncall": {
			Rooms:    []core.Room{{Surface: core.SurfaceDiscord, ID: "D9"}},
			Deciders: map[core.Surface][]string{core.SurfaceDiscord: {"boss"}},
		},
		// leads names people, not accounts: Alice by name and the infra
		// group, on every surface where they have an id. It posts no
		// cards, so the cases that count cards per room are unchanged.
		"leads": {People: []string{"person:alice", "group:infra"}},
		// nag reminds Alice and Bob hourly, twice at most; Bob takes DMs.
		// two needs two of Alice, Bob and Carol; one deny vetoes.
		// two-count counts denies: two of them close it denied.
		"two":       {People: []string{"person:alice", "group:infra"}, Quorum: 2},
		"two-count": {People: []string{"person:alice", "group:infra"}, Quorum: 2, Deny: core.DenyCount},
		"nag": {
			Rooms:       []core.Room{{Surface: core.SurfaceSlack, ID: "C3"}},
			People:      []string{"person:alice", "person:bob"},
			RemindEvery: time.Hour, RemindMax: 2,
		},
	}
}

// config is core's configuration for the suite's routes and people.
func config(actorKey string) core.Config {
	ppl, groups := people()
	return core.Config{Routes: routes(), ActorKey: []byte(actorKey), People: ppl, Groups: groups}
}

// people every case runs with: Alice has an account on every surface,
// Bob on Slack and Telegram, Carol on Discord alone; Bob and Carol are
// the infra group.
func people() (map[string]core.Person, map[string]core.Group) {
	return map[string]core.Person{
			"alice": {DisplayName: "Alice Example", IDs: map[core.Surface][]string{
				core.SurfaceSlack: {"U-alice"}, core.SurfaceDiscord: {"1001"}, core.SurfaceTelegram: {"2001"},
				core.SurfaceAPI: {"alice-token"},
			}},
			"bob": {DisplayName: "Bob", IDs: map[core.Surface][]string{core.SurfaceSlack: {"U-bob"}, core.SurfaceTelegram: {"2002"}},
				DM: true, Prefer: core.SurfaceTelegram},
			"carol": {DisplayName: "Carol", IDs: map[core.Surface][]string{core.SurfaceDiscord: {"1003"}}},
		}, map[string]core.Group{
			"infra": {Members: []string{"bob", "carol"}},
		}
}

// env is one store with a service and a simulated clock over it.
type env struct {
	t     *testing.T
	h     Harness
	store core.Store
	svc   *core.Service
	clock *core.SimClock
	// extra routes, beside routes(), for the cases that need their own.
	extra map[string]core.Route
	// callbacks are the allowed callback URL prefixes (none if nil).
	callbacks core.CallbackPrefixes
}

func newEnv(t *testing.T, h Harness) *env {
	t.Helper()
	e := &env{t: t, h: h, store: h.Open(t), clock: core.NewSimClock(epoch)}
	e.svc = e.service()
	t.Cleanup(func() { e.store.Close() })
	return e
}

func (e *env) service() *core.Service {
	e.t.Helper()
	ppl, groups := people()
	all := routes()
	for name, r := range e.extra {
		all[name] = r
	}
	return coretest.Service(e.t, e.store, coretest.Options{Routes: all, Clock: e.clock, People: ppl, Groups: groups,
		Callbacks: e.callbacks})
}

// restart closes and reopens the store, as a crash and a boot would.
func (e *env) restart() {
	e.t.Helper()
	e.store = e.h.Reopen(e.t, e.store)
	e.svc = e.service()
}

func (e *env) ask(in core.AskInput) *core.Question {
	e.t.Helper()
	q, err := e.svc.Ask(e.t.Context(), in)
	if err != nil {
		e.t.Fatalf("ask: %v", err)
	}
	return q
}

func (e *env) get(id core.QuestionID) *core.Question {
	e.t.Helper()
	q, err := e.svc.Get(e.t.Context(), id)
	if err != nil {
		e.t.Fatalf("get %s: %v", id, err)
	}
	return q
}

// events returns every event of one question, in order.
func (e *env) events(id core.QuestionID) []core.Event {
	e.t.Helper()
	return coretest.EventsOf(e.t, e.store, id)
}

// claimAll drains what is available for a surface without waiting.
func (e *env) claimAll(s core.Surface, consumer string) []core.Delivery {
	e.t.Helper()
	var out []core.Delivery
	for {
		ds, err := e.store.Claim(e.t.Context(), s, consumer, 100, time.Hour, 0)
		if err != nil {
			e.t.Fatalf("claim %s: %v", s, err)
		}
		if len(ds) == 0 {
			return out
		}
		out = append(out, ds...)
		for _, d := range ds {
			if err := e.store.Ack(e.t.Context(), s, d.ID); err != nil {
				e.t.Fatal(err)
			}
		}
	}
}

// calls numbers tool calls: every ask of the suite is a new question, not
// a repeat of an earlier one (asks are idempotent per run and tool call).
var calls atomic.Int64

func nextCall() string { return fmt.Sprintf("call-%d", calls.Add(1)) }

func clarification(run core.RunID) core.AskInput {
	return core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: run, ToolCallID: nextCall(),
		Text: "Which region should the new bucket live in?", Reversibility: core.HardToReverse}
}

func decision(route string) core.AskInput {
	return core.AskInput{Kind: core.KindDecision, Agent: "agent-a", RunID: "run-1", ToolCallID: nextCall(),
		Labels: core.Labels{Project: "billing", Task: "migrate"}, Route: route,
		Text: "Which database for the ledger?", Context: "Write-heavy, 2 TB.", Reversibility: core.HardToReverse,
		Options: []core.Option{
			{ID: "pg", Title: "PostgreSQL", Writeup: "Known, strong consistency; sharding later is work.", Recommended: true},
			{ID: "ddb", Title: "DynamoDB", Writeup: "Scales out; queries are constrained."},
		}}
}

func form() core.AskInput {
	return core.AskInput{Kind: core.KindForm, Agent: "agent-a", RunID: "run-1", Route: "ops",
		Text: "Two choices for the release", Reversibility: core.Reversible,
		Items: []core.FormItem{
			{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday", Recommended: true}, {ID: "fri", Label: "Friday"}}},
			{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
		}}
}

func apiDecider(id string) core.Decider {
	return core.Decider{Surface: core.SurfaceAPI, ID: id, Name: "Operator " + id}
}

func agentDecider(name string) core.Decider {
	return core.Decider{Surface: core.SurfaceAgent, ID: name, Name: name}
}
