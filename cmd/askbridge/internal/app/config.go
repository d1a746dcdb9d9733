package app

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/directive"
	"go.yaml.in/yaml/v3"
)

// File is the YAML configuration (ASKBRIDGE_CONFIG).
type File struct {
	Routes     map[string]RouteFile  `yaml:"routes"`
	People     map[string]PersonFile `yaml:"people"`
	Groups     map[string][]string   `yaml:"groups"`
	Tokens     []TokenFile           `yaml:"tokens"`
	Policies   Policies              `yaml:"policies"`
	Directives []directive.Extra     `yaml:"directives"`
	Webhooks   WebhooksFile          `yaml:"webhooks"`
	OIDC       *OIDCFile             `yaml:"oidc"` // console sign-in (config_oidc.go)
}

// RouteFile is one route: where its cards go and who may decide. Deciders
// are accounts per surface; People ("person:alice", "group:leads") are
// people, on every surface where they have an account.
type RouteFile struct {
	Rooms      []core.Room         `yaml:"rooms"`
	Deciders   map[string][]string `yaml:"deciders"`
	People     []string            `yaml:"people"`
	EscalateTo string              `yaml:"escalate_to"`
	// Standing: false forbids standing approvals on the route;
	// StandingHours > 0 also allows them for an agent for that long.
	Standing      *bool `yaml:"standing"`
	StandingHours int   `yaml:"standing_hours"`
	// RemindEvery reminds the deciders of a question still open every so
	// long, at most RemindMax times (core.DefaultRemindMax when unset).
	RemindEvery Duration `yaml:"remind_every"`
	RemindMax   int      `yaml:"remind_max"`
	// Quorum is how many different people must agree on an approval or
	// a decision; an ask may ask for up to MaxQuorum. Deny is veto (one
	// deny closes it) or count.
	Quorum    int    `yaml:"quorum"`
	MaxQuorum int    `yaml:"max_quorum"`
	Deny      string `yaml:"deny"`
	// Rules are the route's policy rules, checked in order when an
	// approval is asked on it; the first that matches decides.
	Rules []RuleFile `yaml:"rules"`

	// Email and Ntfy are the route's recipients on the one-way doors:
	// addresses (or ntfy topics), or "person:" and "group:" entries for
	// the people's own. They are rooms like any other (parseFile adds
	// them to Rooms); who may decide is still Deciders and People.
	Email []string `yaml:"email"`
	Ntfy  []string `yaml:"ntfy"`

	// CallbackURL is told when any question on the route closes, unless
	// the ask names its own; its webhooks are signed with the route's
	// secret (webhook.go).
	CallbackURL      string `yaml:"callback_url"`
	WebhookSecret    Secret `yaml:"webhook_secret"`
	WebhookSecretEnv string `yaml:"webhook_secret_env"`

	// oneWay is how many of Rooms, at their end, parseFile made from
	// Email and Ntfy, so that an error about one names the key written.
	oneWay int
}

// RuleFile is one policy rule: a CEL condition, and what to decide when
// it holds (allow, deny, or ask: the default, shaped by route,
// reversibility, quorum and timeout).
type RuleFile struct {
	Name          string   `yaml:"name"`
	When          string   `yaml:"when"`
	Decide        string   `yaml:"decide"`
	Reason        string   `yaml:"reason"`
	Route         string   `yaml:"route"`
	Reversibility string   `yaml:"reversibility"`
	Quorum        int      `yaml:"quorum"`
	Timeout       Duration `yaml:"timeout"`
}

// rules is the route's rules as core takes them.
func (r RouteFile) rules() []core.Rule {
	out := make([]core.Rule, len(r.Rules))
	for i, f := range r.Rules {
		out[i] = core.Rule{Name: f.Name, When: f.When, Decide: core.Decision(f.Decide), Reason: f.Reason,
			Route: f.Route, Reversibility: core.Reversibility(f.Reversibility), Quorum: f.Quorum, Timeout: time.Duration(f.Timeout)}
	}
	return out
}

// PersonFile is one person: their account on each chat surface, the
// names of the tokens they use on the API and the console, the display
// name the operator vouches for, and whether they want direct messages
// (on Prefer, else the first chat surface they have).
type PersonFile struct {
	Name     string   `yaml:"name"`
	Slack    string   `yaml:"slack"`
	Discord  string   `yaml:"discord"`
	Telegram string   `yaml:"telegram"`
	Teams    string   `yaml:"teams"` // the person's Microsoft Entra (AAD) object id
	Email    string   `yaml:"email"`
	Ntfy     string   `yaml:"ntfy"`
	Tokens   []string `yaml:"tokens"`
	DM       bool     `yaml:"dm"`
	Prefer   string   `yaml:"prefer"`
	// OIDC is the person's value of oidc.person_claim, when that is not
	// their email (config_oidc.go).
	OIDC string `yaml:"oidc"`
}

// person is the file's person in core's terms.
func (p PersonFile) person() core.Person {
	out := core.Person{DisplayName: p.Name, IDs: map[core.Surface][]string{}, DM: p.DM, Prefer: core.Surface(p.Prefer)}
	for sf, id := range map[core.Surface]string{core.SurfaceSlack: p.Slack, core.SurfaceDiscord: p.Discord, core.SurfaceTelegram: p.Telegram,
		core.SurfaceTeams: p.Teams, core.SurfaceEmail: strings.ToLower(p.Email), core.SurfaceNtfy: p.Ntfy} {
		if id != "" {
			out.IDs[sf] = []string{id}
		}
	}
	if len(p.Tokens) > 0 {
		// A token signs in on the API and on the console alike.
		out.IDs[core.SurfaceAPI] = append([]string(nil), p.Tokens...)
		out.IDs[core.SurfaceConsole] = append([]string(nil), p.Tokens...)
	}
	return out
}

// peopleConfig is the file's people and groups in core's terms.
func (f File) peopleConfig() (map[string]core.Person, map[string]core.Group) {
	people := make(map[string]core.Person, len(f.People))
	for name, p := range f.People {
		people[name] = p.person()
	}
	groups := make(map[string]core.Group, len(f.Groups))
	for name, members := range f.Groups {
		groups[name] = core.Group{Name: name, Members: members}
	}
	return people, groups
}

// TokenFile is one API bearer token. The secret is given inline or, better,
// named by an environment variable so the file can be committed.
type TokenFile struct {
	Name     string `yaml:"name"`
	Role     string `yaml:"role"`
	Token    Secret `yaml:"token"`
	TokenEnv string `yaml:"token_env"`
	// WebhookSecret signs the webhooks of callback URLs the token's asks
	// name (webhook.go).
	WebhookSecret    Secret `yaml:"webhook_secret"`
	WebhookSecretEnv string `yaml:"webhook_secret_env"`
}

// Policies are core's limits and periods.
type Policies struct {
	DefaultTimeout    Duration `yaml:"default_timeout"`
	MaxTimeout        Duration `yaml:"max_timeout"`
	DowntimeThreshold Duration `yaml:"downtime_threshold"`
	Retention         Duration `yaml:"retention"`
	Shards            int      `yaml:"shards"`
	// OutboxIdle is how long a replica's claimed deliveries may go without
	// its heartbeat before another replica takes them over (a crash);
	// zero is loops.DefaultMinIdle.
	OutboxIdle Duration `yaml:"outbox_idle"`
}

// Duration reads a duration from YAML with [core.ParseDuration], the
// parser every door shares ("90s", "24h", "30d", "1d12h").
type Duration time.Duration

// UnmarshalYAML refuses a value that is not a duration with a TypeError
// naming its line, which the decoder reports beside its own errors: any
// other error stops the decoder with its words alone, which named
// neither key nor line in a file of a dozen durations.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := core.ParseDuration(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is %v", n.Line, n.Value, err)}}
	}
	*d = Duration(v)
	return nil
}

// Secret is a string that never shows in logs or error messages.
type Secret string

func (Secret) String() string               { return "REDACTED" }
func (Secret) GoString() string             { return "REDACTED" }
func (Secret) MarshalText() ([]byte, error) { return []byte("REDACTED"), nil }
func (s Secret) Reveal() string             { return string(s) }

// UnmarshalText reads a secret trimmed of the blanks around it, as
// readEnv reads the environment's: a secret written in the file as a
// block scalar ("token: |", the secret on the next line) ends in a
// newline, which no client sends (the API trims the bearer it is sent)
// and no webhook receiver or identity provider holds, so kept, it would
// never match. A secret that is only blanks reads as none, and is
// refused as missing.
func (s *Secret) UnmarshalText(b []byte) error {
	*s = Secret(strings.TrimSpace(string(b)))
	return nil
}

// envName is what a *_env key may hold: an environment variable's name;
// shownEnvName is one spelt as such names are by convention (upper case,
// digits, _), which an error may show.
var (
	envName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,254}$`)
	shownEnvName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,63}$`)
)

// secretFromEnv reads the secret that field (a *_env key) names. A secret
// pasted into the key by mistake must not be echoed into the refusal,
// the log, the reconfigured event and /v1/config/digest: a value that is
// no variable's name is refused without being shown, and the name of an
// empty variable is shown only if it is spelt as names are by convention.
func secretFromEnv(field, name string, getenv func(string) string) (Secret, error) {
	if !envName.MatchString(name) {
		return "", fmt.Errorf("%s: not an environment variable name (letters, digits and _); was the secret itself written there? It is not shown", field)
	}
	if v := getenv(name); v != "" {
		return Secret(v), nil
	}
	if !shownEnvName.MatchString(name) {
		return "", fmt.Errorf("%s: the environment variable it names is empty (its name is not shown: it is not spelt as one, and may be a secret)", field)
	}
	return "", fmt.Errorf("%s: environment variable %s is empty", field, name)
}

// coreConfig turns the file into core's configuration. With no routes
// configured there is one default route, answerable through the API and
// the console by anyone holding a token that may answer.
func (s Settings) coreConfig(actorKey []byte) core.Config {
	cfg := core.Config{
		Routes:            map[string]core.Route{},
		ActorKey:          actorKey,
		DefaultTimeout:    time.Duration(s.File.Policies.DefaultTimeout),
		MaxTimeout:        time.Duration(s.File.Policies.MaxTimeout),
		DowntimeThreshold: time.Duration(s.File.Policies.DowntimeThreshold),
		Retention:         time.Duration(s.File.Policies.Retention),
		Shards:            s.File.Policies.Shards,
		Callbacks:         core.CallbackPrefixes(s.File.Webhooks.Allow),
	}
	for name, r := range s.File.Routes {
		deciders := map[core.Surface][]string{}
		for surface, ids := range r.Deciders {
			if core.Surface(surface) == core.SurfaceEmail { // addresses are kept in lower case
				ids = slices.Clone(ids)
				for i := range ids {
					ids[i] = strings.ToLower(ids[i])
				}
			}
			deciders[core.Surface(surface)] = ids
		}
		cfg.Routes[name] = core.Route{Name: name, Rooms: r.Rooms, Deciders: deciders, People: r.People, EscalateTo: r.EscalateTo,
			RemindEvery: time.Duration(r.RemindEvery), RemindMax: r.RemindMax,
			Quorum: r.Quorum, MaxQuorum: r.MaxQuorum, Deny: core.DenyPolicy(r.Deny),
			Standing: r.Standing, StandingHours: r.StandingHours, Rules: r.rules(), CallbackURL: r.CallbackURL}
	}
	cfg.People, cfg.Groups = s.File.peopleConfig()
	s.File.OIDC.addAccounts(cfg.People)
	if len(cfg.Routes) == 0 {
		cfg.Routes[core.DefaultRoute] = core.Route{Name: core.DefaultRoute, Deciders: map[core.Surface][]string{
			core.SurfaceAPI: {"*"}, core.SurfaceConsole: {"*"},
		}}
	}
	return cfg
}

// readOrCreateSecret returns the secret kept in path, creating it (mode
// 0600, 32 random bytes as hex) on first use. created is true when it did.
func readOrCreateSecret(path string) (secret string, created bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", false, fmt.Errorf("%s is empty: delete it to have a new one made", path)
		}
		return v, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", false, err
	}
	v := hex.EncodeToString(raw[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) { // another process made it first
			return readOrCreateSecret(path)
		}
		return "", false, err
	}
	// The secret is durable before it is used: events chained or signed
	// under a key the disk then lost (a power cut after the events' own
	// fsync) could never be checked again. A secret not written whole is
	// removed, so the next start makes a new one rather than refusing an
	// empty file.
	if _, err := f.WriteString(v + "\n"); err != nil {
		return "", false, discardSecret(f, path, err)
	}
	if err := syncFile(f); err != nil {
		return "", false, discardSecret(f, path, err)
	}
	if err := f.Close(); err != nil {
		return "", false, discardSecret(nil, path, err)
	}
	return v, true, syncDir(filepath.Dir(path))
}

// syncFile is (*os.File).Sync, a variable so that a test can fail it.
var syncFile = (*os.File).Sync

// discardSecret closes f (when not nil) and removes path, a secret file
// this process created and could not make durable, returning err.
func discardSecret(f *os.File, path string, err error) error {
	if f != nil {
		f.Close()
	}
	return errors.Join(err, os.Remove(path))
}

// syncDir makes a new entry in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return syncFile(d)
}
