package apptest

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/redistest"
	"github.com/rs/zerolog"
)

// Backend is one store the end-to-end suite runs on.
type Backend struct {
	Name string
	// Settings returns the store part of the settings; called once per
	// test, so every test gets a fresh store.
	Settings func(t *testing.T) app.Settings
}

var Backends = []Backend{
	{"embedded", func(t *testing.T) app.Settings { return app.Settings{} }},
	{"redis", func(t *testing.T) app.Settings {
		return app.Settings{RedisURL: app.Secret(redistest.Start(t).URL())}
	}},
}

// The tokens every test program accepts; the chat scenarios' Program
// carries agentA and opTok.
const (
	AgentA = "agent-a-token-0123456789"
	AgentB = "agent-b-token-0123456789"
	OpTok  = "operator-token-0123456789"
	ObsTok = "observer-token-0123456789"
)

// Start runs the real program on 127.0.0.1:0 with a temporary data dir.
func Start(t *testing.T, s app.Settings) *app.Main {
	t.Helper()
	return StartClock(t, s, nil)
}

// StartClock is start with the program's clock injected (nil: the wall
// Clock), for the chat scenarios' downtime and timeouts. It keeps
// s.File.Routes, so a driver can add its route.
func StartClock(t *testing.T, s app.Settings, clock core.Clock) *app.Main {
	t.Helper()
	return StartMain(t, &app.Main{Settings: s, Clock: clock})
}

// StartMain runs m (its settings, clock and tracing as the test set
// them) on 127.0.0.1:0 with the test tokens and a quick ticker, and stops
// it when the test ends.
func StartMain(t *testing.T, m *app.Main) *app.Main {
	t.Helper()
	s := &m.Settings
	if s.DataDir == "" {
		s.DataDir = t.TempDir()
	}
	s.Addr = "127.0.0.1:0"
	s.File.Tokens = append([]app.TokenFile{
		{Name: "agent-a", Role: "agent", Token: AgentA},
		{Name: "agent-b", Role: "agent", Token: AgentB},
		{Name: "ops", Role: "operator", Token: OpTok},
		{Name: "dash", Role: "observer", Token: ObsTok},
	}, s.File.Tokens...) // a test's own tokens come after these
	m.Log = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	m.Loops = loops.Intervals{Tick: 20 * time.Millisecond, Remind: 20 * time.Millisecond}
	if err := m.Run(t.Context()); err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Cleanup(func() {
		// A connection a client dialed and never used (the transport
		// dials ahead, then a pooled one comes free) counts as busy to
		// http.Server.Shutdown for its first five seconds; the tests'
		// clients share the default transport, so dropping its idle
		// connections first lets the program stop at once.
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		m.Close()
	})
	return m
}

func ForEachBackend(t *testing.T, f func(t *testing.T, b Backend)) {
	for _, b := range Backends {
		t.Run(b.Name, func(t *testing.T) { f(t, b) })
	}
}

// SyncBuffer is an output a command writes from another goroutine.
type SyncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	Changed chan struct{}
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.Changed <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *SyncBuffer) Contains(s string) bool { return strings.Contains(b.String(), s) }
