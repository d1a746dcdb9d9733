package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
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
	// TrustedProxies are the reverse proxies in front of the console, as
	// addresses or CIDR prefixes: sign-ins through them count against the
	// budget of the client their X-Forwarded-For names.
	TrustedProxies string `env:"ASKBRIDGE_TRUSTED_PROXIES"`

	idle    time.Duration  // set by the check, from Idle
	proxies []netip.Prefix // set by the check, from TrustedProxies
}

func (c *ConsoleSettings) check() error {
	d, err := time.ParseDuration(c.Idle)
	if err != nil || d < time.Minute {
		return fmt.Errorf("ASKBRIDGE_CONSOLE_IDLE: %q is not a duration of a minute or more, such as 8h", c.Idle)
	}
	c.idle = d
	if c.proxies, err = console.ParseProxies(c.TrustedProxies); err != nil {
		return fmt.Errorf("ASKBRIDGE_TRUSTED_PROXIES: %w", err)
	}
	return nil
}

// openConsole builds the operator console over the same tokens as the
// API, its sign-ins bounded by the store's budget (shared by replicas).
func openConsole(s Settings, svc *core.Service, budget core.Budget, tokens []httpapi.Token, clock core.Clock, log zerolog.Logger) (*console.Server, error) {
	opts := console.Options{Tokens: newConsoleTokens(tokens), Idle: s.Console.idle, Log: log, SignIns: budget,
		TrustedProxies: s.Console.proxies, OIDC: s.File.OIDC.console(s.File.People)}
	if clock != nil {
		opts.Now = clock.Now // the program's clock, as core's, for ages and visits
	}
	c, err := console.New(svc, opts)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	return c, nil
}

// consoleTokens looks tokens up for the console. Secrets are kept as
// SHA-256 digests and compared in constant time against every token, so
// neither a secret's length nor which token matched shows in the timing.
type consoleTokens struct {
	accounts []console.Account
	digests  [][sha256.Size]byte
}

func newConsoleTokens(tokens []httpapi.Token) *consoleTokens {
	c := &consoleTokens{}
	for _, t := range tokens {
		sum := sha256.Sum256([]byte(t.Secret))
		// The stamp names the secret without revealing it, so a session
		// ends when its token gets a new secret.
		stamp := sha256.Sum256(append([]byte("askbridge console stamp\x00"), t.Secret...))
		c.accounts = append(c.accounts, console.Account{Name: t.Name, Role: console.Role(t.Role), Stamp: hex.EncodeToString(stamp[:8])})
		c.digests = append(c.digests, sum)
	}
	return c
}

func (c *consoleTokens) BySecret(secret string) (console.Account, bool) {
	got := sha256.Sum256([]byte(secret))
	match := -1
	for i := range c.digests {
		if subtle.ConstantTimeCompare(got[:], c.digests[i][:]) == 1 {
			match = i // no early return: every token is compared
		}
	}
	if match < 0 {
		return console.Account{}, false
	}
	return c.accounts[match], true
}

func (c *consoleTokens) ByName(name string) (console.Account, bool) {
	for _, a := range c.accounts {
		if a.Name == name {
			return a, true
		}
	}
	return console.Account{}, false
}
