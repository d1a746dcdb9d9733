package redis

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	"github.com/askbridge/askbridge/store/internal/watches"
)

var _ core.Store = (*Store)(nil)

// Options configure a Store. The zero value is usable.
type Options struct {
	// Prefix starts every key and channel; default "ab". Stores with
	// different prefixes share a Redis without seeing each other.
	Prefix string
	// Shards is how many shards questions, events and outboxes are split
	// into; default 1, at most core.MaxShards. One shard suits standalone
	// Redis and Sentinel; on a cluster, more shards spread the load over
	// nodes. It must not change while data is kept: ids and event numbers
	// are placed by it.
	Shards int
	// Group is the outbox consumer group; default "askbridge".
	Group string
	// Durability, when on, makes each transition a caller is told
	// succeeded wait for replicas first (durable.go). It sends each
	// transition on a connection of its own, not through the
	// autopipeliner, so it costs throughput as well as the wait.
	Durability Durability
	// Now, when set, is the clock the outbox's due times are kept on
	// (retries, delayed deliveries). Nil means the Redis server's clock,
	// which every replica shares; tests inject a simulated clock to make
	// deliveries fall due without sleeping.
	Now func() time.Time
	// AuditKey keys the audit chain of the event log (core/audit); every
	// replica sharing a Redis must use the same key. It stays in this
	// process: scripts get only what it computed. Empty chains under an
	// empty key, which proves nothing against someone who can write to
	// Redis: askbridge serve always sets one.
	AuditKey audit.Key

	// sentinel, set by Connect on Sentinel, names the Sentinels whose
	// word that the primary moved the Store follows (sentinels.go).
	sentinel *goredis.FailoverOptions
}

func (o *Options) fill() error {
	if o.Prefix == "" {
		o.Prefix = "ab"
	}
	if strings.ContainsAny(o.Prefix, "{} \t\r\n") {
		return core.Errorf(core.CodeInvalid, "redis store", "key prefix %q may not contain braces or spaces", o.Prefix)
	}
	if o.Shards == 0 {
		o.Shards = 1
	}
	if o.Shards < 1 || o.Shards > core.MaxShards {
		return core.Errorf(core.CodeInvalid, "redis store", "shards is %d; it must be between 1 and %d", o.Shards, core.MaxShards)
	}
	if o.Group == "" {
		o.Group = "askbridge"
	}
	return o.Durability.fill()
}

// Store is a core.Store on Redis. It is safe for concurrent use.
type Store struct {
	client goredis.UniversalClient
	// ap is go-redis's autopipeliner on client (nil for a Ring, which has
	// none). The hot paths, the transition scripts and the question reads,
	// go through it: what concurrent callers send at once leaves in one
	// write and comes back in one read, where each would otherwise take a
	// connection and a round trip of its own, and Redis reads them in one
	// go too. The first few calls in flight (directCalls) are sent at
	// once, on connections of their own, without waiting for company.
	ap      *goredis.AutoPipeliner
	hot     atomic.Int32 // hot-path calls in flight (hotStart)
	owned   bool         // Open made the client, so Close closes it
	k       keys
	sk      []shardKeys // per shard, built once: the hot paths build no key strings
	shards  int
	group   string
	cluster bool
	// replicas is Durability.Replicas: how many replicas each primary
	// needs (Ping), 0 when durability is off (see durable).
	replicas  int
	lateWakes lateWakes
	late      sync.WaitGroup

	ps        *goredis.PubSub
	sentinels *sentinelWatch // on Sentinel, through Connect; else nil
	done      chan struct{}  // closed by Close: the subscriber should stop
	stopped   chan struct{}  // closed by the subscriber when it has stopped
	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex  // guards ps
	watchers watches.Set // told of changes by this Store and, through pub/sub, by others
	cache    *readCache  // of watched questions, for the reads they cause
	// resubscribed counts the subscriptions resubscribe made anew.
	resubscribed atomic.Int64

	// attempts names each call of Commit or Renotify (see attempt).
	attemptPrefix string
	attempts      atomic.Uint64

	claimTurn atomic.Uint32 // rotates the shard a claim starts at
	now       func() time.Time

	rate *redis_rate.Limiter // send budgets (Spend)

	audit audit.Key
	heads heads // the audit chain's heads this Store has seen (chain.go)
}

// durable reports whether Durability is on. The scripts then publish no
// wake-up; the store does, once the wait has held (announce), or later
// (announceWhenHeld: lateWakes, whose loops late counts).
func (s *Store) durable() bool { return s.replicas > 0 }

// Open connects to the Redis at url (redis:// or rediss://, as go-redis's
// ParseURL reads it) and returns a Store that closes the connection on
// Close. For Sentinel or Cluster, use Connect, or build a UniversalClient
// and call New.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	return Connect(ctx, Dial{Topology: Single, URL: url}, opts)
}

// New returns a Store on client. It creates the outbox consumer groups
// and subscribes to wake-ups, returning only once the subscription is
// confirmed, so no change made after New returns goes unannounced. The
// caller keeps ownership of client: Close does not close it. Which of its
// errors mean "failing over, try again" Unavailable says (failover.go).
//
// Under load the Store sends through client's AsyncAutoPipeline, which
// go-redis keeps one of per client: options the caller gave it first
// (Options.AutoPipelineOptions) apply to the Store too, and should keep
// its default ordered stream; if the caller closes it, the Store sends
// straight through the client. A client that reads from replicas
// (ReadOnly, RouteByLatency) is not for a Store: its reads must see the
// writes that preceded them. On a caller's Sentinel (failover) client the
// Store does not know the Sentinels: after a SENTINEL FAILOVER its
// subscription to wake-ups stays on the old primary until that one is
// made a replica; Connect's Store follows the Sentinels' word instead.
func New(ctx context.Context, client goredis.UniversalClient, opts Options) (*Store, error) {
	const op = "redis store"
	if err := opts.fill(); err != nil {
		return nil, err
	}
	s := &Store{
		client:  client,
		k:       keys{prefix: opts.Prefix},
		shards:  opts.Shards,
		group:   opts.Group,
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
		cache:   newReadCache(),
		rate:    redis_rate.NewLimiter(client),
		now:     opts.Now,
		audit:   opts.AuditKey,
	}
	s.watchers.First, s.watchers.Last = s.cache.watch, s.cache.unwatch
	var seed [8]byte
	_, _ = rand.Read(seed[:]) // never fails (crypto/rand)
	s.attemptPrefix = base64.RawURLEncoding.EncodeToString(seed[:]) + "."
	s.replicas = opts.Durability.Replicas
	for shard := range s.shards {
		sk := s.k.forShard(shard)
		if s.durable() {
			sk.wakeArg = "" // the scripts publish nothing: announce does, after the wait
		}
		s.sk = append(s.sk, sk)
	}
	switch client.(type) {
	case *goredis.ClusterClient:
		s.cluster = true
	case *goredis.Ring:
		// A Ring subscribes on the one ring member its first channel hashes
		// to, so wake-ups published in the other shards would never arrive.
		if s.shards > 1 {
			return nil, core.Errorf(core.CodeInvalid, op, "a go-redis Ring supports one shard only; use a ClusterClient for several")
		}
	}
	if err := client.Ping(ctx).Err(); err != nil {
		return nil, core.Internal(op, fmt.Errorf("ping: %w", err))
	}
	if opts.Durability.Replicas > 0 {
		// Each transition and its wait go out together on one connection
		// (durable.go), which the autopipeliner cannot promise.
		d, err := newDurableClient(ctx, client, opts.Durability)
		if err != nil {
			return nil, core.Internal(op, fmt.Errorf("durability: %w", err))
		}
		s.client = d
	} else if c, ok := client.(autoPipelining); ok {
		// The deferred face: a read's two commands are both queued before
		// it waits, so they go in the same batch. The client keeps the
		// autopipeliner and closes it when it closes. A client that cannot
		// give one (a Ring says so) sends each command on its own.
		if ap, err := c.AsyncAutoPipeline(); err == nil {
			s.ap = ap
		}
	}
	if err := s.checkShards(ctx); err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		return nil, core.Internal(op, err)
	}
	for shard := range s.shards {
		for _, box := range s.k.outboxes(shard) {
			if err := s.createGroup(ctx, box); err != nil {
				return nil, core.Internal(op, err)
			}
			if err := s.pruneConsumers(ctx, box); err != nil {
				return nil, core.Internal(op, err)
			}
		}
	}
	if err := s.subscribe(ctx); err != nil {
		return nil, core.Internal(op, err)
	}
	if opts.sentinel != nil {
		s.watchSentinels(opts.sentinel)
	}
	return s, nil
}

// checkShards records the store's shard count when it is first opened
// and refuses to open it with another: a question's id names its shard,
// and an idempotency key's shard follows from the count, so a store
// reopened with another count would read questions of the shards it no
// longer has as unknown, and ask a repeated ask again. Every replica, and
// `askbridge audit verify`, must open it as it was made.
func (s *Store) checkShards(ctx context.Context) error {
	const op = "redis open"
	key, want := s.k.shardCount(), strconv.Itoa(s.shards)
	set, err := s.client.SetNX(ctx, key, want, 0).Result()
	if err != nil {
		return core.Internal(op, err)
	}
	if set {
		return nil
	}
	got, err := s.client.Get(ctx, key).Result()
	if err != nil {
		return core.Internal(op, err)
	}
	if got != want {
		return core.Errorf(core.CodeInvalid, op, "this Redis holds a store of %s shards, and it is opened with %d (policies.shards): a store keeps the shard count it was made with", got, s.shards)
	}
	return nil
}

// autoPipelining is a client that may have an autopipeliner (go-redis's
// Client and ClusterClient do; its Ring refuses).
type autoPipelining interface {
	AsyncAutoPipeline() (*goredis.AutoPipeliner, error)
}

// staleConsumer is how long a consumer that holds nothing may sit idle
// before a starting replica removes it from the group. A live consumer
// claims about every second, so ten minutes of silence means it is gone.
// A variable so the tests need not wait.
var staleConsumer = 10 * time.Minute

// pruneConsumers removes consumers that hold no pending deliveries and
// have been idle staleConsumer: a clean stop removes its own consumer, but
// one that died cannot, and the group would otherwise grow for ever (law
// 9). A consumer with pending entries is kept, so its work is reclaimed,
// never dropped; the check and the removal are one script.
func (s *Store) pruneConsumers(ctx context.Context, stream string) error {
	if _, err := s.run(ctx, leaveScript, []string{stream}, s.group, "", staleConsumer.Milliseconds()); err != nil {
		return fmt.Errorf("remove idle consumers of %s: %w", stream, err)
	}
	return nil
}

// createGroup makes the consumer group of an outbox stream (and the
// stream), reading from its start so nothing enqueued before is skipped.
func (s *Store) createGroup(ctx context.Context, stream string) error {
	err := s.client.XGroupCreateMkStream(ctx, stream, s.group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("create consumer group on %s: %w", stream, err)
	}
	return nil
}

// Close stops the wake-up subscriber and, if Open made the client, closes
// it. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		if s.sentinels != nil {
			s.sentinels.stop()
		}
		if err := s.subscription().Close(); err != nil && !errors.Is(err, goredis.ErrClosed) {
			s.closeErr = err
		}
		<-s.stopped
		s.closeLate()
		s.late.Wait()
		s.wakeAll() // whoever still waits should look again, and find the store closed
		if s.owned {
			if err := s.client.Close(); err != nil && s.closeErr == nil {
				s.closeErr = err
			}
		}
	})
	return s.closeErr
}

// Ping reports whether Redis can take writes: whether the primary of
// every shard answers and is a primary still (ROLE). A replica that
// answers where a primary should (a Sentinel failover under way, a
// cluster's map not yet moved on) is not ready. The error's Message says
// what is happening in words safe for an unauthenticated probe (no
// addresses); a failover's is marked core.ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	const op = "redis ping"
	type doer interface {
		Do(ctx context.Context, args ...any) *goredis.Cmd
	}
	// The primaries, each once, in the order of their first shard: asked
	// in that order, several failing give the same answer each time.
	type node struct {
		doer
		what string
	}
	var nodes []node
	seen := map[string]bool{}
	if cc, ok := s.base().(*goredis.ClusterClient); ok {
		for shard := range s.shards {
			n, err := cc.MasterForKey(ctx, s.k.tag(shard))
			if err != nil {
				return pingError(op, "the cluster's map of slots cannot be read", err)
			}
			if addr := n.Options().Addr; !seen[addr] {
				seen[addr] = true
				nodes = append(nodes, node{n, fmt.Sprintf("the primary of shard %d", shard)})
			}
		}
	} else {
		nodes = append(nodes, node{s.base(), "the primary"})
	}
	for _, n := range nodes {
		role, err := n.Do(ctx, "ROLE").Slice()
		var rerr goredis.Error
		if err != nil && errors.As(err, &rerr) && !failingOver(err) {
			// ROLE refused (renamed, or not in an ACL's commands): whether
			// the node answers is all that can be known.
			if err := n.Do(ctx, "PING").Err(); err != nil {
				return pingError(op, n.what+" does not answer", err)
			}
			continue
		}
		if err != nil {
			return pingError(op, n.what+" does not answer", err)
		}
		if len(role) == 0 || role[0] != "master" {
			return pingError(op, n.what+" answers as a replica: a failover is under way",
				&unavailableError{fmt.Errorf("ROLE says %v", role)})
		}
		// With durability on, a write is told it succeeded only once
		// enough replicas hold it: fewer connected than that, every
		// write waits out its timeout and is refused, so the store
		// cannot take writes. ROLE lists a primary's connected replicas.
		if connected, ok := roleReplicas(role); ok && connected < s.replicas {
			return pingError(op, fmt.Sprintf("%s has %d of the %d replicas durability needs connected: every write is refused until they are", n.what, connected, s.replicas),
				fmt.Errorf("ROLE lists %d replicas", connected))
		}
	}
	return nil
}

// roleReplicas is how many replicas a primary's ROLE reply lists as
// connected; false if the reply does not say.
func roleReplicas(role []any) (int, bool) {
	if len(role) < 3 {
		return 0, false
	}
	list, ok := role[2].([]any)
	return len(list), ok
}

// pingError is Ping's error: msg says what is happening, err why.
func pingError(op, msg string, err error) error {
	if failingOver(err) {
		err = markErr(err)
	}
	return &core.Error{Code: core.CodeInternal, Op: op, Message: msg, Err: err}
}

// Beat swaps the heartbeat (beat.lua). The call carries an attempt id,
// so a call go-redis sends again after losing its reply still tells the
// heartbeat it replaced, not the one its first run wrote: otherwise a
// start would see no downtime and skip its catch-up.
func (s *Store) Beat(ctx context.Context, now time.Time) (time.Time, error) {
	const op = "redis beat"
	r, err := s.run(ctx, beatScript, []string{s.k.beat()}, 0, "", "", msString(now), s.attempt())
	if err != nil {
		return time.Time{}, core.Internal(op, err)
	}
	if len(r.list) != 1 {
		return time.Time{}, core.Internal(op, fmt.Errorf("beat replied %d values", len(r.list)))
	}
	if r.list[0] == "-" {
		return time.Time{}, nil
	}
	v, err := strconv.ParseInt(r.list[0], 10, 64)
	if err != nil {
		return time.Time{}, core.Internal(op, fmt.Errorf("stored heartbeat %q: %w", r.list[0], err))
	}
	return fromMS(v), nil
}

// clock is the scripts' argument for the store's clock (common.lua's
// clock_ms): "" for the server's own.
func (s *Store) clock() string {
	if s.now == nil {
		return ""
	}
	return msString(s.now())
}

// shardOf returns the shard of a question id, or false if the id is not
// shaped like one or names a shard this store does not have.
func (s *Store) shardOf(id core.QuestionID) (int, bool) {
	sh := core.ShardOf(id)
	return sh, sh >= 0 && sh < s.shards
}

// clockArg is the scripts' ARGV[2], the clock their events' numbers
// follow (common.lua's append_event): with several shards the server's
// (TIME), which every shard's mark is read on (event_mark.lua); with one,
// this process's wall clock in microseconds, which costs the script no
// call and serves as well: it only has to pass the numbers a failover
// may have lost, given out a moment before.
func (s *Store) clockArg() any {
	if s.shards > 1 {
		return serverClock
	}
	var b [24]byte
	return string(strconv.AppendInt(append(b[:0], 't'), time.Now().UnixMicro(), 10))
}

// serverClock is clockArg with several shards, boxed once.
var serverClock any = "1"

// seq turns a shard's event number into the Seq core sees. With one shard
// they are the same; with several, the shard is folded in so that every
// Seq is unique and a shard's Seqs increase. Either way a shard's numbers
// follow its server's clock (common.lua's append_event), so they have
// gaps, and a failover that loses the newest events does not hand their
// numbers out again.
func (s *Store) seq(n int64, shard int) int64 {
	return n*int64(s.shards) + int64(shard)
}

// attempt names one call of a script that must know a re-send as its own
// (Commit, Renotify, Append, Beat, Once, a Purge batch, a Claim of one
// shard), uniquely among every store's calls: a random prefix per Store
// and a count. The script keeps it with
// what the call changed, so that when go-redis sends the script again
// after losing its reply, the second run knows the first as its own.
func (s *Store) attempt() string {
	return s.attemptPrefix + strconv.FormatUint(s.attempts.Add(1), 36)
}
