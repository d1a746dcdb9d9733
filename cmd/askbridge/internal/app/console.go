package app

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/core"
	"github.com/rs/zerolog"
)

// ConsoleSettings configure the operator console.
type ConsoleSettings struct {
	// Idle is how long an unused console session lasts, as a Go duration.
	Idle string `env:"ASKBRIDGE_CONSOLE_IDLE" envDefault:"12h"`
	// MaxAge is how long a console session lasts from its sign-in, used
	// or not, as a Go duration.
	MaxAge string `env:"ASKBRIDGE_CONSOLE_MAX_AGE" envDefault:"24h"`
	// TrustedProxies are the reverse proxies in front of the console, as
	// addresses or CIDR prefixes: sign-ins through them count against the
	// budget of the client their X-Forwarded-For names.
	TrustedProxies string `env:"ASKBRIDGE_TRUSTED_PROXIES"`

	idle    time.Duration  // set by the check, from Idle
	maxAge  time.Duration  // set by the check, from MaxAge
	proxies []netip.Prefix // set by the check, from TrustedProxies
}

func (c *ConsoleSettings) check() error {
	d, err := core.ParseDuration(c.Idle)
	if err != nil || d < time.Minute {
		return fmt.Errorf("ASKBRIDGE_CONSOLE_IDLE: %q is not a duration of a minute or more, such as 8h", c.Idle)
	}
	c.idle = d
	if d, err = core.ParseDuration(c.MaxAge); err != nil || d < c.idle {
		return fmt.Errorf("ASKBRIDGE_CONSOLE_MAX_AGE: %q is not a duration of at least ASKBRIDGE_CONSOLE_IDLE (%s), such as 24h", c.MaxAge, c.Idle)
	}
	c.maxAge = d
	if c.proxies, err = console.ParseProxies(c.TrustedProxies); err != nil {
		return fmt.Errorf("ASKBRIDGE_TRUSTED_PROXIES: %w", err)
	}
	return nil
}

// openConsole builds the operator console over the same tokens as the
// API (the one set, replaced on reload for both), its sign-ins bounded by
// the store's budget (shared by replicas).
func openConsole(s Settings, svc *core.Service, budget core.Budget, keys *httpapi.Keys, people *oidcPeople, clock core.Clock, log zerolog.Logger) (*console.Server, error) {
	opts := console.Options{Tokens: consoleTokens{keys}, Idle: s.Console.idle, MaxAge: s.Console.maxAge, Log: log, SignIns: budget,
		TrustedProxies: s.Console.proxies, OIDC: s.File.OIDC.console(s.File.People, people)}
	if clock != nil {
		opts.Now = clock.Now // the program's clock, as core's, for ages and visits
	}
	c, err := console.New(svc, opts)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	return c, nil
}

// consoleTokens looks the API's tokens up for the console.
type consoleTokens struct{ keys *httpapi.Keys }

func (c consoleTokens) BySecret(secret string) (console.Account, bool) {
	t, ok := c.keys.Find(secret)
	return consoleAccount(t), ok
}

func (c consoleTokens) ByName(name string) (console.Account, bool) {
	t, ok := c.keys.Named(name)
	return consoleAccount(t), ok
}

func consoleAccount(t httpapi.Token) console.Account {
	if t.Name == "" {
		return console.Account{}
	}
	return console.Account{Name: t.Name, Role: t.Role, Stamp: t.Stamp()}
}
