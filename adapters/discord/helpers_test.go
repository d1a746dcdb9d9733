package discord

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
)

// The people of the adapter's tests. Bob may decide through his role.
var (
	alice   = discordfake.User{ID: "111111111111111111", Name: "Alice"}
	bob     = discordfake.User{ID: "222222222222222222", Name: "Bob", Roles: []string{"777777777777777777"}}
	mallory = discordfake.User{ID: "333333333333333333", Name: "Mallory"}
	roomID  = "345626669114982402"
)

// rig is an adapter on a real service (embedded store) wired to a fake
// Discord, with its HTTP endpoint served on a local port.
type rig struct {
	t     *testing.T
	fake  *discordfake.Server
	svc   *core.Service
	store *bolt.Store
	a     *Adapter
	url   string // the interactions endpoint
	// stopRun ends the adapter's Run alone (the outbox's drain goes on)
	// and returns a channel closed once Run has returned.
	stopRun func() <-chan struct{}
}

type rigOptions struct {
	gateway bool
	appID   string
	// rooms are route ops's Discord rooms; nil is roomID alone.
	rooms []string
	// clock, when set, is the store's clock: held card updates fall due
	// only when the test moves it, and so does whatever the drain sends
	// back to the outbox to go later (a retry, a delivery for a room
	// that holds all it may).
	clock *core.SimClock
	// rate is the courier's REST calls per second; 0 is the default.
	rate int
	// now is the adapter's wall clock; nil is time.Now.
	now func() time.Time
	// wrap, when set, is what the service gets instead of the store: the
	// store with some of its calls held back.
	wrap func(core.Store) core.Store
	// budget, when set, is the shared send budget the drain spends from.
	budget core.Budget
	// people are the configured people; those named are on route ops.
	people map[string]core.Person
	// batch is the drain's claim size (DeliverOptions.Batch); 0 is the
	// default.
	batch int
	// transport, when set, wraps what carries the adapter's REST calls
	// to the fake.
	transport func(http.RoundTripper) http.RoundTripper
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	fake := discordfake.New()
	t.Cleanup(fake.Close)
	if o.rooms == nil {
		o.rooms = []string{roomID}
	}
	var rooms []core.Room
	for _, id := range o.rooms {
		rooms = append(rooms, core.Room{Surface: core.SurfaceDiscord, ID: id})
	}
	var st *bolt.Store
	if o.clock != nil {
		st = coretest.OpenStoreOn(t, o.clock.Now)
	} else {
		st = coretest.OpenStore(t)
	}
	var cs core.Store = st
	if o.wrap != nil {
		cs = o.wrap(st)
	}
	var people []string
	for name := range o.people {
		people = append(people, core.PersonPrefix+name)
	}
	svc := coretest.Service(t, cs, coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms:    rooms,
		Deciders: map[core.Surface][]string{core.SurfaceDiscord: {alice.ID, "role:777777777777777777"}, core.SurfaceAPI: {"ops"}},
		People:   people,
	}}, People: o.people})
	key, err := hexKey(fake.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(svc, Options{Token: fake.Token, AppID: o.appID, PublicKey: key, APIURL: fake.APIURL(), Gateway: o.gateway,
		RatePerSecond: o.rate, Now: o.now, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if o.transport != nil {
		rw := a.s.Client.Transport.(*rewrite)
		rw.next = o.transport(rw.next)
	}
	mux := http.NewServeMux()
	a.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r := &rig{t: t, fake: fake, svc: svc, store: st, a: a, url: srv.URL + InteractionsPath}
	ctx, cancel := context.WithCancel(context.Background())
	runCtx, stopRun := context.WithCancel(ctx)
	ran, done := make(chan struct{}), make(chan struct{})
	go func() { a.Run(runCtx); close(ran) }()
	go func() {
		loops.Deliver(ctx, svc, a, loops.DeliverOptions{Block: 50 * time.Millisecond, Budget: o.budget, Batch: o.batch})
		close(done)
	}()
	r.stopRun = func() <-chan struct{} { stopRun(); return ran }
	// Stop the adapter before the fake goes (cleanups run last-in first).
	t.Cleanup(func() { cancel(); <-ran; <-done })
	return r
}

func hexKey(s string) ([]byte, error) { return hex.DecodeString(s) }

// outbox is how many Discord deliveries the store holds, held ones
// included, until acked.
func (r *rig) outbox() int {
	r.t.Helper()
	st, err := r.store.OutboxStat(context.Background(), core.SurfaceDiscord)
	if err != nil {
		r.t.Fatal(err)
	}
	return st.Depth
}

// drained waits until the Discord outbox is empty: every update sent or
// dropped.
func (r *rig) drained() {
	r.t.Helper()
	if !r.fake.WaitFor(30*time.Second, func() bool { return r.outbox() == 0 }) {
		r.t.Fatalf("the outbox still holds %d deliveries", r.outbox())
	}
}

// patches counts the REST edits of one message.
func (r *rig) patches(messageID string) int {
	n := 0
	for _, c := range r.fake.Calls() {
		if c.Method == http.MethodPatch && strings.HasSuffix(c.Path, "/messages/"+messageID) {
			n++
		}
	}
	return n
}

// ask parks a question on route ops.
func (r *rig) ask(in core.AskInput) *core.Question {
	r.t.Helper()
	in.Route, in.Agent = "ops", "agent-a"
	if in.RunID == "" {
		in.RunID = "run-1"
	}
	if in.Reversibility == "" {
		in.Reversibility = core.HardToReverse
	}
	q, err := r.svc.Ask(r.t.Context(), in)
	if err != nil {
		r.t.Fatal(err)
	}
	return q
}

// card waits for q's card in the fake to satisfy cond.
func (r *rig) card(id core.QuestionID, cond func(discordfake.Message) bool) discordfake.Message {
	r.t.Helper()
	var got discordfake.Message
	ok := r.fake.WaitFor(10*time.Second, func() bool {
		q, err := r.svc.Get(context.Background(), id)
		if err != nil || len(q.Messages) == 0 {
			return false
		}
		m, found := r.fake.Message(q.Messages[0].ID)
		got = m
		return found && (cond == nil || cond(m))
	})
	if !ok {
		r.t.Fatalf("card of %s never got there; last seen %+v", id, got)
	}
	return got
}

func (r *rig) button(m discordfake.Message, want core.Ref) discordfake.Button {
	r.t.Helper()
	for _, b := range m.Buttons() {
		if b.CustomID == want.Encode() {
			return b
		}
	}
	r.t.Fatalf("no button %+v on %+v", want, m.Buttons())
	return discordfake.Button{}
}

// post sends an interaction to the HTTP endpoint, signed, and wants 200.
func (r *rig) post(in discordfake.Interaction) *discordfake.Response {
	r.t.Helper()
	status, resp, err := r.fake.Post(r.url, in, discordfake.Signed)
	if err != nil || status != http.StatusOK || resp == nil {
		r.t.Fatalf("interaction: %d %v", status, err)
	}
	return resp
}

func (r *rig) question(id core.QuestionID) *core.Question {
	r.t.Helper()
	q, err := r.svc.Get(r.t.Context(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return q
}

func (r *rig) events(id core.QuestionID) []core.EventKind {
	r.t.Helper()
	return coretest.Kinds(coretest.EventsOf(r.t, r.svc, id))
}

func count(kinds []core.EventKind, k core.EventKind) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}

func decisionInput() core.AskInput {
	return core.AskInput{Kind: core.KindDecision, Text: "Which database for the ledger?", Context: "Write-heavy, 2 TB.",
		Labels: core.Labels{Project: "billing", Task: "ledger"},
		Options: []core.Option{
			{ID: "pg", Title: "PostgreSQL", Writeup: "Known; sharding later is work.", Recommended: true},
			{ID: "ddb", Title: "DynamoDB", Writeup: "Scales out; queries are constrained."},
		}}
}
