// Package coretest sets up core for tests: an embedded store in a
// temporary directory, a core.Service with routes over it, and the reading
// of one question's events. Every package's tests build their bridge with
// it, so a change to how core is built is made once.
package coretest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
	"github.com/askbridge/askbridge/store/bolt"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// Options says what the Service is built with.
type Options struct {
	// Routes by name; nil is APIRoutes.
	Routes map[string]core.Route
	// Clock is the service's clock; nil is the wall clock.
	Clock core.Clock
	// People and Groups are the configured people (none if nil).
	People map[string]core.Person
	Groups map[string]core.Group
	// Callbacks are the allowed callback URL prefixes (none if nil).
	Callbacks core.CallbackPrefixes
}

// ActorKey is the key tests name actors in the event log with.
const ActorKey = "test actor key"

// AuditKey is the key the stores OpenStore opens chain the event log
// under (core/audit).
const AuditKey = "test audit key"

// APIRoutes is the default route alone, which anyone with an API token may
// answer: what a bridge with no configuration runs with.
func APIRoutes() map[string]core.Route {
	return map[string]core.Route{core.DefaultRoute: {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}}}
}

// OpenStore opens an empty embedded store in a temporary directory and
// closes it when the test ends. It skips fsync: tests that prove
// durability open their own.
func OpenStore(t testing.TB) *bolt.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "askbridge.db"))
}

// Stores open each store the bridge runs on, empty, per test: the
// embedded one (OpenStore) and Redis on a server of the test's own.
var Stores = map[string]func(t *testing.T) core.Store{
	"embedded": func(t *testing.T) core.Store { return OpenStore(t) },
	"redis": func(t *testing.T) core.Store {
		srv := redistest.Start(t)
		st, err := redisstore.Open(context.Background(), srv.URL(), redisstore.Options{AuditKey: []byte(AuditKey)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	},
}

// ReopenStore closes an embedded store opened by OpenStore and opens the
// same file again, as a restart would.
func ReopenStore(t testing.TB, s core.Store) *bolt.Store {
	t.Helper()
	bs := s.(*bolt.Store)
	if err := bs.Close(); err != nil {
		t.Fatalf("close %s: %v", bs.Path(), err)
	}
	return openAt(t, bs.Path())
}

// OpenStoreOn is OpenStore with the store's clock (outbox leases and due
// times) set to now, so tests make deliveries fall due without sleeping.
func OpenStoreOn(t testing.TB, now func() time.Time) *bolt.Store {
	t.Helper()
	return openWith(t, filepath.Join(t.TempDir(), "askbridge.db"), now)
}

func openAt(t testing.TB, path string) *bolt.Store {
	t.Helper()
	return openWith(t, path, nil)
}

func openWith(t testing.TB, path string, now func() time.Time) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, bolt.Options{NoSync: true, Now: now, AuditKey: []byte(AuditKey)})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Service builds a core.Service over st, failing the test if core refuses
// the options.
func Service(t testing.TB, st core.Store, o Options) *core.Service {
	t.Helper()
	routes := o.Routes
	if routes == nil {
		routes = APIRoutes()
	}
	svc, err := core.New(st, core.Config{Routes: routes, ActorKey: []byte(ActorKey), People: o.People, Groups: o.Groups,
		Callbacks: o.Callbacks}, o.Clock)
	if err != nil {
		t.Fatalf("core.New: %v", err)
	}
	return svc
}

// Open is OpenStore and Service together: a bridge's core on a fresh
// embedded store.
func Open(t testing.TB, o Options) (*core.Service, *bolt.Store) {
	t.Helper()
	st := OpenStore(t)
	return Service(t, st, o), st
}

// EventReader reads the event log: a core.Service and a core.Store both do.
type EventReader interface {
	Events(ctx context.Context, since int64, limit int) ([]core.Event, error)
}

// EventsOf reads the whole log through r and returns question id's events,
// in order.
func EventsOf(t testing.TB, r EventReader, id core.QuestionID) []core.Event {
	t.Helper()
	all, err := r.Events(t.Context(), 0, 100000)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	return OfQuestion(all, id)
}

// OfQuestion keeps question id's events of evs, in order, for logs read some other
// way (the HTTP client).
func OfQuestion(evs []core.Event, id core.QuestionID) []core.Event {
	var out []core.Event
	for _, ev := range evs {
		if ev.QuestionID == id {
			out = append(out, ev)
		}
	}
	return out
}

// Kinds lists the kinds of evs, in order.
func Kinds(evs []core.Event) []core.EventKind {
	out := make([]core.EventKind, len(evs))
	for i, ev := range evs {
		out[i] = ev.Kind
	}
	return out
}

// Escalated asks in, whose OnTimeout escalates, moves clock past its
// timeout and ticks, and returns the question as the escalation left it:
// for the doors' tests of what someone only the escalation route lets in
// may do.
func Escalated(t testing.TB, svc *core.Service, clock *core.SimClock, in core.AskInput) *core.Question {
	t.Helper()
	q, err := svc.Ask(t.Context(), in)
	if err != nil || !q.Open() {
		t.Fatalf("ask: %+v, %v", q, err)
	}
	clock.Advance(in.Timeout)
	if rep, err := svc.Tick(t.Context()); err != nil || rep.Escalated != 1 {
		t.Fatalf("tick: %+v, %v", rep, err)
	}
	if q, err = svc.Get(t.Context(), q.ID); err != nil {
		t.Fatal(err)
	}
	return q
}
