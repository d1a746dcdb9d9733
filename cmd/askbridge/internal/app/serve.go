package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/errgroup"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/metrics"
	"github.com/askbridge/askbridge/adapters/webhook"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/store/bolt"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// Main is the server program: Run starts it and returns once it listens,
// Close stops it. Tests run the real program this way, on 127.0.0.1:0 and a
// temporary data directory.
type Main struct {
	Settings Settings
	Stdout   io.Writer // where the first-start notice goes
	Log      zerolog.Logger
	Clock    core.Clock // nil: the wall clock
	Loops    loops.Intervals
	// Tracing is the tracer provider core's spans go to; nil: tracing is
	// off (serve sets it from the OTEL_* variables, otel.go).
	Tracing trace.TracerProvider
	// Hangups are the SIGHUPs that have the configuration file read again
	// (reload.go); serve relays the process's, a test sends its own. Nil:
	// the file is read again only when it changes.
	Hangups <-chan os.Signal
	// Getenv reads the environment for a reloaded file's token_env
	// entries; nil is os.Getenv.
	Getenv func(string) string

	// Set by Run.
	URL        string // http://host:port of the listener
	AdminToken string
	StoreKind  string // "embedded" or "redis"
	ReplicaID  string // this replica's name for leases (Settings.ReplicaID)
	Service    *core.Service
	Metrics    *metrics.Metrics
	MetricsURL string // http://host:port of ASKBRIDGE_METRICS_ADDR's listener, if set

	store    core.Store
	api      *httpapi.Server
	console  *console.Server
	webhooks *webhook.Sender
	// oidcPeople are the people the console's OIDC sign-in finds, replaced
	// on reload.
	oidcPeople *oidcPeople
	stopMCP    context.CancelFunc
	chats      []chatAdapter
	consumer   string
	server     *http.Server
	cancel     context.CancelFunc
	group      *errgroup.Group
	stopped    <-chan struct{}
	closeErr   error

	metricsServer *http.Server
	metricsLn     net.Listener
}

// chatAdapter is a chat platform as the program runs it: the contract in
// core (a courier for the outbox, an inbound transport, any HTTP
// endpoints the platform calls), named here for the openers.
type chatAdapter = core.ChatAdapter

// chatAdapters open each chat platform from the settings; each returns nil
// when its platform is not configured. Each platform's file registers its
// opener in init; the README's "Adding a platform" lists the few other
// places a new platform touches.
var chatAdapters []chatOpener

// chatOpener opens one chat platform from the settings, or returns nil
// when the platform is not configured.
type chatOpener func(ctx context.Context, s Settings, svc *core.Service, budget core.Budget, log zerolog.Logger) (chatAdapter, error)

// adminTokenName is the name the admin token acts under in the API and the
// event log.
const adminTokenName = "admin"

// maxHeaderBytes bounds a request's header on the program's listeners (Go's
// default is 1 MiB). The largest header any caller sends is a Bot
// Connector's bearer token, a few KB; a request needs no token to be read
// and logged.
const maxHeaderBytes = 64 << 10

// Run opens the store, boots core (re-notifying after downtime), and
// serves the API until Close.
func (m *Main) Run(ctx context.Context) (err error) {
	s := m.Settings
	if m.Stdout == nil {
		m.Stdout = io.Discard
	}
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		return fmt.Errorf("ASKBRIDGE_DATA_DIR: %w", err)
	}
	if s.ReplicaID == "" {
		if s.ReplicaID, err = stableReplicaID(s.DataDir); err != nil {
			return fmt.Errorf("replica id: %w", err)
		}
	}
	m.ReplicaID = s.ReplicaID
	defer func() {
		if err != nil {
			m.Close()
		}
	}()

	if err := m.openStore(ctx, s); err != nil {
		return err
	}
	actorKey, err := m.openService(&s)
	if err != nil {
		return err
	}
	svc := m.Service

	tokenPath := filepath.Join(s.DataDir, "admin.token")
	unshown, err := markUnshown(tokenPath)
	if err != nil {
		return fmt.Errorf("admin token: %w", err)
	}
	admin, created, err := readOrCreateSecret(tokenPath)
	if err != nil {
		return fmt.Errorf("admin token: %w", err)
	}
	m.AdminToken = admin
	tokens := m.apiTokens(s.File)

	boot, err := svc.Boot(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil { // served nothing: the downtime goes on
			if uerr := svc.Unboot(context.WithoutCancel(ctx), boot); uerr != nil {
				m.Log.Warn().Err(uerr).Msg("the heartbeat of a failed start could not be taken back")
			}
		}
	}()
	if boot.Down > 0 {
		m.Log.Info().Dur("away", boot.Down).Int("digests", boot.Digests).
			Msg("was away longer than the downtime threshold: open questions are being re-notified in the background")
	}

	// Both stores keep budgets, shared by every replica on one Redis: the
	// outbox's send budgets, the console's sign-in attempts and the wrong
	// bearer tokens every door that takes the API's tokens counts.
	budget, _ := m.store.(core.Budget)
	opts := httpapi.Options{Tokens: tokens, Log: m.Log, Extras: s.File.Directives, Guesses: budget, TrustedProxies: s.Console.proxies,
		Unavailable: m.unavailable(), HostDeclines: hostDeclines(svc), MaxWaitsPerQuestion: s.API.maxWaits}
	api, err := httpapi.New(svc, opts)
	if err != nil {
		return err
	}
	m.api = api
	reloads := m.newReloader(s, []byte(actorKey))
	defer func() {
		if err != nil {
			reloads.close() // the loop that would close it never starts
		}
	}()
	m.oidcPeople = &oidcPeople{}
	if m.console, err = openConsole(s, svc, budget, api.Keys(), m.oidcPeople, m.Clock, m.Log); err != nil {
		return err
	}
	api.Handle("/", m.console) // everything the API and the probes do not take
	mux := http.NewServeMux()
	mux.Handle("/", api)
	if err := m.mountMetrics(mux, api, svc); err != nil {
		return err
	}
	m.mountAgentDoors(mux, api, svc, s.API.maxWaits, s.API.maxSessions)
	m.consumer = replicaName()
	if err := m.openChats(ctx, s, svc, budget, mux); err != nil {
		return err
	}
	if err := checkSurfaces(s.File, svc.DMs(), m.running()); err != nil {
		return refusedSetting{s.fileError(err)}
	}

	hooks, err := openWebhooks(s.File)
	if err != nil {
		return err
	}
	m.webhooks = hooks

	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("ASKBRIDGE_ADDR: %w", err)
	}
	m.URL = "http://" + ln.Addr().String()
	ln = api.Listener(ln) // a parked wait's connection keeps alive after its answer
	// An unclean path under /v1 is the API's 404, not the mux's redirect.
	srv := newServer(m.Metrics.Streams(api.Front(mux)))
	m.server = srv

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	g, gctx := errgroup.WithContext(runCtx)
	m.group, m.stopped = g, gctx.Done()
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(m.serveMetrics())
	g.Go(func() error { return reloads.runReloads(gctx, m.Hangups) })
	g.Go(func() error {
		return loops.Run(gctx, svc, m.Loops, func(err error) { m.Log.Error().Err(err).Msg("background pass failed") })
	})
	m.runChats(gctx, g, svc, time.Duration(s.File.Policies.OutboxIdle), budget)
	g.Go(func() error { return m.deliverWebhooks(gctx, svc, hooks) })

	m.Log.Info().Str("store", m.StoreKind).Str("url", m.URL).Str("console", m.URL+"/").Msg("askbridge is serving")
	// The token is shown by the first start that serves, not the one that
	// made it: a start that failed after making it (a busy port) showed
	// it to nobody.
	if _, err := os.Stat(unshown); created || err == nil {
		m.showAdminToken(tokenPath, admin, len(s.File.Tokens) > 0)
		if err := os.Remove(unshown); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.Log.Warn().Err(err).Msg("the admin token was shown, but the next start may show it again")
		}
	}
	return nil
}

// showAdminToken tells whoever started serve where it runs and how to
// sign in: with the admin token this start made, printed, for a
// bridge whose configuration names no tokens (the zero set-up start, whose
// admin token is the only way in). A configuration that names the API's
// tokens is a deployment's, whose output goes to a log many can read,
// where the token, good on this replica for as long as its data
// directory lasts, would be an admin's key to anyone reading it (a pod
// restarted on an empty volume prints a new one each time): there only
// the file that keeps it is named.
func (m *Main) showAdminToken(path, token string, configured bool) {
	fmt.Fprintf(m.Stdout, "\naskbridge is running on the %s store at %s\n", m.StoreKind, m.URL)
	if configured {
		fmt.Fprintf(m.Stdout, "console: %s/ (sign in with a token of the configuration; this replica's own admin token is kept in %s, not printed)\n\n", m.URL, path)
		return
	}
	fmt.Fprintf(m.Stdout, "console: %s/ (sign in with the admin token below)\n", m.URL)
	fmt.Fprintf(m.Stdout, "admin token (shown once; kept in %s):\n  %s\n\n", path, token)
}

// markUnshown marks the admin token at tokenPath as not shown yet, when
// there is none yet (this start makes it), and returns the mark's path:
// the token is shown, and the mark removed, once a start has served.
func markUnshown(tokenPath string) (string, error) {
	mark := tokenPath + ".unshown"
	if _, err := os.Stat(tokenPath); !errors.Is(err, fs.ErrNotExist) {
		return mark, nil // made before: shown then, or marked then
	}
	return mark, os.WriteFile(mark, nil, 0o600)
}

// openService makes core's service over the open store, with the
// server's actor key (the settings' or, if they name none, one made once
// in the data directory), which it returns and sets in s: the one-way
// doors sign their links with it, by the program's clock (see
// Settings.Clock).
func (m *Main) openService(s *Settings) (actorKey string, err error) {
	actorKey = s.ActorKey.Reveal()
	if actorKey == "" {
		if actorKey, _, err = readOrCreateSecret(filepath.Join(s.DataDir, "actor.key")); err != nil {
			return "", fmt.Errorf("actor key: %w", err)
		}
	}
	s.ActorKey, s.Clock = Secret(actorKey), m.Clock
	svc, err := core.New(m.newMetrics(m.store), s.coreConfig([]byte(actorKey)), m.Clock)
	if err != nil {
		return "", err
	}
	m.Service = svc
	svc.SetTracing(m.Tracing)
	return actorKey, nil
}

// openStore opens the store the settings name: Redis when a Redis
// address is set, else the embedded store in the data directory.
func (m *Main) openStore(ctx context.Context, s Settings) error {
	dial, redisVar, err := s.redisDial()
	if err != nil {
		return err
	}
	auditKey, err := s.auditKey(true)
	if err != nil {
		return fmt.Errorf("audit key: %w", err)
	}
	if redisVar == "" {
		path := filepath.Join(s.DataDir, "askbridge.db")
		st, err := bolt.Open(path, bolt.Options{AuditKey: auditKey})
		if err != nil {
			return fmt.Errorf("embedded store %s: %w", path, err)
		}
		m.store, m.StoreKind = st, "embedded"
		return nil
	}
	goredis.SetLogger(redisLog{m.Log})
	st, err := redisstore.Connect(ctx, dial, redisstore.Options{Shards: s.File.Policies.Shards, Durability: s.durability, AuditKey: auditKey})
	if err != nil {
		return fmt.Errorf("%s: %w", redisVar, err)
	}
	m.store, m.StoreKind = st, "redis"
	logSpread(ctx, st, m.Log)
	return nil
}

// openChats opens every chat platform the settings configure and mounts
// the endpoints each platform calls on mux. budget is the send budget the
// outbox's drain spends (runChats); a platform that sends beyond the
// drain's one message a delivery spends from it too.
func (m *Main) openChats(ctx context.Context, s Settings, svc *core.Service, budget core.Budget, mux *http.ServeMux) error {
	for _, open := range chatAdapters {
		c, err := open(ctx, s, svc, budget, m.Log)
		if err != nil {
			return err
		}
		if c == nil {
			continue // not configured
		}
		c.Mount(mux)
		m.chats = append(m.chats, c)
		m.Log.Info().Str("surface", string(c.Surface())).Msg("chat adapter on")
	}
	return nil
}

// runChats runs, in g, each chat platform's inbound side and its
// courier: the outbox's deliveries to it, claimed after minIdle and
// spent from budget (a courier that names no budgets spends from none).
func (m *Main) runChats(ctx context.Context, g *errgroup.Group, svc *core.Service, minIdle time.Duration, budget core.Budget) {
	failed := m.deliveryFailed(ctx, svc, "delivery failed", "delivery waits")
	for _, c := range m.chats {
		g.Go(func() error { return c.Run(ctx) })
		g.Go(func() error {
			o := loops.DeliverOptions{Consumer: m.consumer, MinIdle: minIdle, Budget: budget, OnError: failed}
			return loops.Deliver(ctx, svc, c, o)
		})
	}
}

// deliveryFailed logs a failed attempt at a delivery as msg, naming its
// recipient as the event log does (core.Service.Logged): a key spells an
// email address, an ntfy topic (a password on a public server) or a
// person's name, and the platform's error quotes the address or topic.
// A wait the platform asked for (core.RetryAfter: its rate limit) or the
// courier's own (core.NotReady) is no failure: nothing was sent, and the
// outbox sends it when the wait is over, so it is logged at info as
// waitMsg, not as a warning an operator would chase.
func (m *Main) deliveryFailed(ctx context.Context, svc *core.Service, msg, waitMsg string) func(core.Delivery, error) {
	return func(d core.Delivery, err error) {
		if ctx.Err() != nil {
			return // cut short by the shutdown: handed back for another replica to take at once
		}
		key, reason := svc.Logged(d, err)
		ev, text := m.Log.Warn(), msg
		var ra *core.RetryAfter
		var nr *core.NotReady
		if errors.As(err, &ra) || errors.As(err, &nr) {
			ev, text = m.Log.Info(), waitMsg
		}
		ev.Str("error", reason).Str("surface", string(d.Surface)).Str("delivery", key).Int("attempts", d.Attempts).Msg(text)
	}
}

// now is the program's clock's time.
func (m *Main) now() time.Time {
	if m.Clock != nil {
		return m.Clock.Now().UTC()
	}
	return time.Now().UTC()
}

// stableReplicaID is this replica's name for leases when
// ASKBRIDGE_REPLICA_ID is unset: the host name (a container's or pod's
// own) and an id made once in the data directory. A replica restarted on
// the same host and data keeps it, and so takes back its own lease at
// once; two containers that share one data volume still differ by host.
func stableReplicaID(dataDir string) (string, error) {
	id, _, err := readOrCreateSecret(filepath.Join(dataDir, "replica.id"))
	if err != nil {
		return "", err
	}
	host, _ := os.Hostname()
	return host + "-" + id[:12], nil
}

// replicaName names this process among the bridge's replicas, for outbox
// claims and leases: host, process id and a random part, so a restarted
// process is a new claimant.
func replicaName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), randomHex(3))
}

// Stopped is closed once a part of the running program has failed (a chat
// adapter whose platform refused its token, say) and the others are
// stopping, or Close was called; Close then reports why.
func (m *Main) Stopped() <-chan struct{} { return m.stopped }

// Close stops serving (finishing requests for up to ten seconds), stops
// the background loops and closes the store, in reverse order of start.
func (m *Main) Close() error {
	// Parked long polls and MCP calls return now, the question still
	// open, instead of holding up the shutdown; agents wait again later.
	if m.api != nil {
		m.api.Drain()
	}
	if m.console != nil {
		m.console.Drain() // its event streams, which pages resume elsewhere
	}
	if m.stopMCP != nil {
		m.stopMCP()
	}
	if m.server != nil {
		// The grace period is longer than the 5 s for which Shutdown counts
		// a connection that has not sent a request yet (one a client dialed
		// and then had no use for) as busy, so such a connection delays a
		// shutdown but does not make it fail.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := m.server.Shutdown(ctx); err != nil {
			// Still busy after the grace period: cut the connections, so
			// no handler outlives the store closed below.
			m.closeErr = errors.Join(m.closeErr, err, m.server.Close())
		}
		cancel()
		m.server = nil
	}
	m.closeErr = errors.Join(m.closeErr, m.closeMetrics())
	if m.cancel != nil {
		m.cancel()
		m.closeErr = errors.Join(m.closeErr, m.group.Wait())
		m.cancel = nil
	}
	if m.store != nil {
		m.closeErr = errors.Join(m.closeErr, m.store.Close())
		m.store = nil
	}
	return m.closeErr
}

// unavailable is the store's own test of an error that means "not now"
// (a Redis failover's), which the doors answer as such (503, or said so)
// rather than as broken; nil on the embedded store, whose errors core
// marks itself.
func (m *Main) unavailable() func(error) bool {
	if m.StoreKind == "redis" {
		return redisstore.Unavailable
	}
	return nil
}
