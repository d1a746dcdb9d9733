package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// Config is the part of askbridge's configuration that core enforces.
type Config struct {
	// Routes by name. Every question names one; "" means DefaultRoute.
	Routes map[string]Route
	// ActorKey keys the HMAC that names actors in the event log.
	ActorKey []byte
	// DefaultTimeout is a question's deadline when the asker gives none.
	DefaultTimeout time.Duration
	// MaxTimeout caps what an asker may ask for.
	MaxTimeout time.Duration
	// DowntimeThreshold: after a longer gap between heartbeats, open
	// questions are re-notified and a digest is posted at boot.
	DowntimeThreshold time.Duration
	// Retention is how long closed questions and their events are kept.
	Retention time.Duration
	// Shards is how many shards new ids are spread over (1 unless the
	// store runs on a Redis Cluster).
	Shards int
	// People and Groups name people once across surfaces (people.go);
	// routes refer to them by name.
	People map[string]Person
	Groups map[string]Group
	// Callbacks are the URL prefixes a question's callback URL must be
	// under (callback.go); none turns callbacks off.
	Callbacks CallbackPrefixes
	// Tokens are the bearer tokens the doors outside core admit callers
	// with (the API, the console, MCP, the metrics), in the form those
	// doors keep them. core never reads them: it carries them in the
	// configuration it swaps whole, so that a reload puts them in force
	// in the same step as the routes and people they go with
	// (Reconfigure): a request that arrives after the swap is admitted by
	// the new tokens and acts under the new routes. (One admitted before
	// it may still act after it; each act checks the person again, not
	// the token.) nil: the doors keep tokens of their own.
	Tokens any
}

// DefaultRoute is the route a question takes when it names none.
const DefaultRoute = "default"

// Defaults for Config's zero values.
const (
	DefaultTimeout           = 24 * time.Hour
	DefaultMaxTimeout        = 30 * 24 * time.Hour
	DefaultDowntimeThreshold = 5 * time.Minute
	DefaultRetention         = 30 * 24 * time.Hour
	// MinAskTimeout is the shortest timeout an agent's door (the HTTP
	// API, MCP) takes: a question is for a person, and one timing out
	// within a second is a unit slipped ("1ns", "500ms" meant as
	// minutes), closed at the next tick with its cards sent for nothing.
	// core itself takes any positive timeout, for tests on simulated time.
	// The configuration is held to it too wherever it sets a timeout in
	// the asker's place or caps one (configuredTimeout).
	MinAskTimeout = time.Second
	// MinRetention is the shortest retention taken: a purge of a question
	// closed seconds ago would answer its agent's wait 404 and let a
	// retried ask park it again.
	MinRetention = time.Hour
)

// HeartbeatInterval is how often a running bridge records that it is up
// (Service.Beat; core/loops' default). A gap between beats longer than
// the downtime threshold is a downtime, so the threshold must leave room
// for at least one beat missed by a restart: see bind.
const HeartbeatInterval = 15 * time.Second

// Service is core: every door (chat adapters, the API, the CLI, the
// ticker) calls it, and it alone changes questions.
type Service struct {
	store    Store
	clock    Clock
	observer Observer   // nil: nobody listens (see observe.go)
	tracer   spanTracer // nil: tracing is off (trace.go)
	// live is the configuration being enforced, swapped whole by
	// Reconfigure (reconfigure.go): a reader loads it once and sees one
	// configuration throughout, never half of two, and nobody waits.
	live atomic.Pointer[bound]
	// reminders says whether Remind lists the open questions
	// (remindscan.go).
	reminders remindScan
	// endings are the runs being ended as this replica last knew them
	// (endings.go).
	endings endingsSeen
	// tallies is the sweep of cards due after the configuration changed
	// (refresh.go, refreshshared.go).
	tallies tallyRefresh
}

// bound is one checked configuration and the people directory built from
// it.
type bound struct {
	cfg Config
	dir directory
	// pinned is each route as a question asked now keeps it
	// (Question.AskedRoute), so that RouteOf knows a question asked under
	// the route in force without decoding its copy.
	pinned map[string]string
	// digest names what of the configuration a card's tally is drawn
	// from (tallyDigest), and since is when this replica put that in
	// force (New, or a Reconfigure that changed the digest): the sweep
	// of cards shared between replicas goes by both (refreshshared.go).
	digest string
	since  time.Time
}

// conf is the configuration in force now. A method that reads several
// settings loads it once.
func (s *Service) conf() *bound { return s.live.Load() }

// Retention is how long a closed question is kept in force now
// (Config.Retention): a door that promises how long a question can be
// read (MCP's task ttlMs) states it from this.
func (s *Service) Retention() time.Duration { return s.conf().cfg.Retention }

// Tokens are the doors' tokens the configuration in force carries
// (Config.Tokens), nil if it carries none.
func (s *Service) Tokens() any { return s.conf().cfg.Tokens }

// New checks cfg and returns a Service over store.
func New(store Store, cfg Config, clock Clock) (*Service, error) {
	if clock == nil {
		clock = RealClock{}
	}
	b, err := bind(cfg)
	if err != nil {
		return nil, err
	}
	s := &Service{store: store, clock: clock}
	s.reminders.on = true // what was asked before this start is unknown
	s.tallies.replica = string(NewID(0))
	b.since = s.now()
	s.swap(b)
	return s, nil
}

// bind fills cfg's defaults and checks it whole: the one validation of a
// configuration, at start and at every reload.
func bind(cfg Config) (*bound, error) {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"default timeout", cfg.DefaultTimeout}, {"max timeout", cfg.MaxTimeout}, {"downtime threshold", cfg.DowntimeThreshold}, {"retention", cfg.Retention}} {
		// A negative retention would put the purge's cutoff in the
		// future, and purge every closed question at once.
		if d.v < 0 {
			return nil, fmt.Errorf("core: the %s must not be negative (%s)", d.name, d.v)
		}
	}
	if cfg.MaxTimeout == 0 {
		cfg.MaxTimeout = DefaultMaxTimeout
	}
	if bad := configuredTimeout(cfg.MaxTimeout, 0); bad != "" {
		return nil, fmt.Errorf("core: the max timeout: %s", bad)
	}
	switch {
	case cfg.DefaultTimeout > cfg.MaxTimeout:
		return nil, fmt.Errorf("core: the default timeout (%s) is longer than the max timeout (%s), so every ask that names none would be refused", cfg.DefaultTimeout, cfg.MaxTimeout)
	case cfg.DefaultTimeout == 0:
		// A max timeout set alone below the default caps the default
		// too, rather than refusing every ask that names no timeout.
		cfg.DefaultTimeout = min(DefaultTimeout, cfg.MaxTimeout)
	}
	if bad := configuredTimeout(cfg.DefaultTimeout, 0); bad != "" {
		return nil, fmt.Errorf("core: the default timeout: %s", bad)
	}
	if cfg.DowntimeThreshold == 0 {
		cfg.DowntimeThreshold = DefaultDowntimeThreshold
	}
	// The last beat before a restart may be a whole heartbeat interval
	// old, and a beat may come late: under two intervals, a graceful
	// restart of a second would count as a downtime and re-notify every
	// open question.
	if least := 2 * HeartbeatInterval; cfg.DowntimeThreshold < least {
		return nil, fmt.Errorf("core: the downtime threshold (%s) must be at least %s, twice the heartbeat interval", cfg.DowntimeThreshold, least)
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Retention < MinRetention {
		return nil, fmt.Errorf("core: the retention (%s) must be at least %s: a closed question, and the key a retried ask finds it by, must outlive the agent's wait and its retries", cfg.Retention, MinRetention)
	}
	if cfg.Shards == 0 {
		cfg.Shards = 1
	}
	if cfg.Shards < 0 || cfg.Shards > MaxShards {
		return nil, fmt.Errorf("core: shards must be between 1 and %d", MaxShards)
	}
	if len(cfg.ActorKey) == 0 {
		return nil, errors.New("core: an actor key is required to name actors in the event log")
	}
	if err := cfg.Callbacks.Validate(); err != nil {
		return nil, fmt.Errorf("core: %s", ErrorMessage(err))
	}
	dir, err := newDirectory(cfg.People, cfg.Groups)
	if err != nil {
		return nil, fmt.Errorf("core: %w", err)
	}
	routes, err := bindRoutes(cfg, dir)
	if err != nil {
		return nil, fmt.Errorf("core: %w", err)
	}
	cfg.Routes = routes
	b := &bound{cfg: cfg, dir: dir, pinned: make(map[string]string, len(routes))}
	for name, r := range routes {
		raw, err := json.Marshal(r.settings())
		if err != nil {
			return nil, fmt.Errorf("core: route %q: %w", name, err)
		}
		b.pinned[name] = string(raw)
	}
	if b.digest, err = tallyDigest(b); err != nil {
		return nil, fmt.Errorf("core: %w", err)
	}
	return b, nil
}

// configuredTimeout is the one check of a timeout the configuration
// sets (the default, the max, a policy rule's): what is wrong with d,
// "" if nothing. It holds d to the floor the agent doors hold an
// asker's timeout to (MinAskTimeout), since it stands in for the
// asker's, and, with max set, to max. A unit slipped ("500ms" meant as
// minutes) would otherwise load, and time out every question it
// applies to at the next tick, their cards sent for nothing.
func configuredTimeout(d, max time.Duration) string {
	switch {
	case d < MinAskTimeout:
		return fmt.Sprintf("%s is shorter than the minimum, %s: a question is for a person (a unit slipped? write a %s)", d, MinAskTimeout, DurationForms)
	case max > 0 && d > max:
		return fmt.Sprintf("%s is longer than the max timeout, %s", d, max)
	}
	return ""
}

// bindRoutes names each route, resolves its people and checks it, then
// compiles its rules, every route in the order of their names, so that a
// configuration with several bad routes is refused for the same one on
// every start and reload.
func bindRoutes(cfg Config, dir directory) (map[string]Route, error) {
	names := sortedKeys(cfg.Routes)
	routes := make(map[string]Route, len(names))
	for _, name := range names {
		r := cfg.Routes[name]
		r.Name = name
		var err error
		if r.persons, err = dir.members(name, r.People); err != nil {
			return nil, err
		}
		if r.posts, err = dir.posts(name, r.Rooms, true); err != nil {
			return nil, err
		}
		r.bound = true
		if err := checkReminders(r); err != nil {
			return nil, err
		}
		if err := checkQuorum(r); err != nil {
			return nil, err
		}
		routes[name] = r
	}
	for _, name := range names {
		if err := checkRoute(cfg, routes, routes[name]); err != nil {
			return nil, fmt.Errorf("route %q: %w", name, err)
		}
	}
	known := make(map[string]bool, len(names))
	for _, name := range names {
		known[name] = true
	}
	for _, name := range names {
		r := routes[name]
		var err error
		if r.Rules, err = CompileRules(name, r.Rules, known, cfg.MaxTimeout); err != nil {
			return nil, err
		}
		routes[name] = r
	}
	for _, name := range names {
		if err := checkRuleQuorums(routes, name); err != nil {
			return nil, err
		}
	}
	return routes, nil
}

// checkRoute checks what route r says of itself and of the other routes.
func checkRoute(cfg Config, routes map[string]Route, r Route) error {
	for _, sf := range sortedKeys(r.Deciders) {
		for _, e := range r.Deciders[sf] {
			if strings.HasPrefix(e, PersonPrefix) || strings.HasPrefix(e, GroupPrefix) {
				return fmt.Errorf("deciders.%s: %q belongs in people, where it applies on every surface", sf, e)
			}
		}
	}
	for _, room := range r.Rooms {
		if !room.Surface.IsChat() {
			return fmt.Errorf("rooms[].surface %q is not a chat surface", room.Surface)
		}
	}
	if r.StandingHours < 0 || r.StandingHours > MaxStandingHours {
		return fmt.Errorf("standing_hours must be between 0 and %d", MaxStandingHours)
	}
	if r.StandingHours > 0 && !r.StandingAllowed() {
		return errors.New("standing_hours is set but standing is false")
	}
	if r.CallbackURL != "" {
		if err := cfg.Callbacks.Check("callback_url", r.CallbackURL); err != nil {
			return errors.New(ErrorMessage(err))
		}
	}
	if r.EscalateTo != "" {
		if _, ok := routes[r.EscalateTo]; !ok {
			return fmt.Errorf("escalate_to names unknown route %q", r.EscalateTo)
		}
	}
	return nil
}

// Ping reports whether the store answers, for readiness probes.
func (s *Service) Ping(ctx context.Context) error { return s.store.Ping(ctx) }

// Values is the part of the store a door may keep its own state in (a
// long poller's offset and lease). It is all of the store a door gets:
// questions change through the Service alone (law 1), and the wrapper
// keeps a caller from asserting its way back to the whole store.
func (s *Service) Values() Values { return valuesOnly{s.store} }

type valuesOnly struct{ Values }

// Route returns a configured route.
func (s *Service) Route(name string) (Route, bool) {
	r, ok := s.conf().cfg.Routes[name]
	return r, ok
}

// now is the clock's time in the form stores keep: UTC, milliseconds.
func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Millisecond) }

// Now is the Service's clock as the stores keep time, for the loops
// (core/loops) that reckon with it: a delivery's age, a budget's turns.
func (s *Service) Now() time.Time { return s.now() }

// pseudonym names d in the event log (see Pseudonym).
func (s *Service) pseudonym(d Decider) string { return Pseudonym(s.conf().cfg.ActorKey, d) }

// sortedRouteNames keeps boot-time work in a stable order.
func (s *Service) sortedRouteNames() []string {
	routes := s.conf().cfg.Routes
	names := make([]string, 0, len(routes))
	for n := range routes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
