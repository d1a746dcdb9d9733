package app

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
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

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := core.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("%q is %w", n.Value, err)
	}
	*d = Duration(v)
	return nil
}

// Secret is a string that never shows in logs or error messages.
type Secret string

func (Secret) String() string                  { return "REDACTED" }
func (Secret) GoString() string                { return "REDACTED" }
func (Secret) MarshalText() ([]byte, error)    { return []byte("REDACTED"), nil }
func (s Secret) Reveal() string                { return string(s) }
func (s *Secret) UnmarshalText(b []byte) error { *s = Secret(b); return nil }

// parseFile decodes and checks the YAML file. Unknown keys are errors:
// a misspelt key silently ignored is a policy silently not applied. The
// environment variables the file names (token_env, secret_env, ...) are
// read trimmed, as readEnv reads every other: a secret mounted from a
// file often ends in a newline, which no HTTP client can send.
func parseFile(raw []byte, env func(string) string) (File, error) {
	getenv := func(k string) string { return strings.TrimSpace(env(k)) }
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) { // io.EOF: an empty file
		return f, err
	}
	// A second document would be ignored, and with it whatever it sets.
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return File{}, errors.New("the configuration holds more than one YAML document (a line of ---): put everything in one")
	}
	if err := checkRoutes(&f); err != nil {
		return f, err
	}
	tokens, err := checkTokens(&f, getenv)
	if err != nil {
		return f, err
	}
	if err := checkPeople(f, tokens); err != nil {
		return f, err
	}
	if err := checkWebhooks(&f, getenv); err != nil {
		return f, err
	}
	if err := checkOIDC(&f, getenv); err != nil {
		return f, err
	}
	if err := checkPolicies(f); err != nil {
		return f, err
	}
	if err := directive.ValidateExtras(f.Directives); err != nil {
		return f, fmt.Errorf("directives: %w", err)
	}
	return f, nil
}

// checkRoutes checks every route, in the order of their names so that a
// file with several mistakes names the same one first each time, and adds
// each route's one-way rooms to its rooms.
func checkRoutes(f *File) error {
	for _, name := range inOrder(f.Routes) {
		if name == "" {
			return fmt.Errorf("routes: a route needs a name")
		}
		r := f.Routes[name]
		key := "routes." + name
		rooms, err := oneWayRooms(*f, key, r)
		if err != nil {
			return err
		}
		r.Rooms = append(r.Rooms, rooms...)
		f.Routes[name] = r
		if err := checkRoute(*f, key, r); err != nil {
			return err
		}
	}
	return nil
}

// checkRoute checks route r of f, named by key in errors.
func checkRoute(f File, key string, r RouteFile) error {
	for i, room := range r.Rooms {
		if !room.Surface.IsChat() {
			return fmt.Errorf("%s.rooms[%d].surface: %q is not %s", key, i, room.Surface, core.SurfaceNames(core.ChatSurfaces))
		}
		if room.ID == "" {
			return fmt.Errorf("%s.rooms[%d].id is required", key, i)
		}
	}
	for _, surface := range inOrder(r.Deciders) {
		ids := r.Deciders[surface]
		if _, err := core.ParseSurface(surface); err != nil {
			return fmt.Errorf("%s.deciders.%s: not a surface: %s", key, surface, core.SurfaceNames(core.AnswerSurfaces))
		}
		for j, id := range ids {
			if strings.TrimSpace(id) == "" {
				return fmt.Errorf("%s.deciders.%s[%d] is empty", key, surface, j)
			}
		}
	}
	if r.StandingHours < 0 || r.StandingHours > core.MaxStandingHours {
		return fmt.Errorf("%s.standing_hours must be between 0 and %d", key, core.MaxStandingHours)
	}
	if r.StandingHours > 0 && r.Standing != nil && !*r.Standing {
		return fmt.Errorf("%s.standing_hours is set but standing is false", key)
	}
	if r.EscalateTo != "" {
		if _, ok := f.Routes[r.EscalateTo]; !ok {
			return fmt.Errorf("%s.escalate_to: no route named %q", key, r.EscalateTo)
		}
	}
	if every := time.Duration(r.RemindEvery); every != 0 && every < core.MinRemindEvery {
		return fmt.Errorf("%s.remind_every: must be at least %s", key, core.MinRemindEvery)
	}
	if r.RemindMax < 0 || r.RemindMax > core.MaxReminders {
		return fmt.Errorf("%s.remind_max: must be between 1 and %d", key, core.MaxReminders)
	}
	if r.RemindMax > 0 && r.RemindEvery == 0 {
		return fmt.Errorf("%s.remind_max: set without remind_every", key)
	}
	if _, err := core.ParseDenyPolicy(r.Deny); err != nil {
		return fmt.Errorf("%s.deny: %q is not veto or count", key, r.Deny)
	}
	return nil
}

// checkTokens checks the tokens, reads those given by environment
// variable, and returns the set of their names.
func checkTokens(f *File, getenv func(string) string) (map[string]bool, error) {
	names := map[string]bool{}
	for i, t := range f.Tokens {
		key := fmt.Sprintf("tokens[%d]", i)
		if t.Name == "" {
			return nil, fmt.Errorf("%s.name is required", key)
		}
		if names[t.Name] {
			return nil, fmt.Errorf("%s.name %q is used twice", key, t.Name)
		}
		names[t.Name] = true
		if _, err := httpapi.ParseRole(t.Role); err != nil {
			return nil, fmt.Errorf("%s.role: %q is not agent, operator, observer or admin", key, t.Role)
		}
		switch {
		case t.Token != "" && t.TokenEnv != "":
			return nil, fmt.Errorf("%s: give token or token_env, not both", key)
		case t.TokenEnv != "":
			v := getenv(t.TokenEnv)
			if v == "" {
				return nil, fmt.Errorf("%s.token_env: environment variable %s is empty", key, t.TokenEnv)
			}
			f.Tokens[i].Token = Secret(v)
		case t.Token == "":
			return nil, fmt.Errorf("%s: token or token_env is required", key)
		}
		if len(f.Tokens[i].Token) < 16 {
			return nil, fmt.Errorf("%s: the token must be at least 16 characters", key)
		}
	}
	return names, nil
}

// checkPolicies checks the policies and compiles every route's policy
// rules, so that a rule that does not compile or does not return a bool
// stops the server at load, naming the rule.
func checkPolicies(f File) error {
	p := f.Policies
	if p.Shards < 0 || p.Shards > core.MaxShards {
		return fmt.Errorf("policies.shards: must be between 1 and %d", core.MaxShards)
	}
	if p.OutboxIdle < 0 || (p.OutboxIdle > 0 && time.Duration(p.OutboxIdle) < time.Second) {
		return fmt.Errorf("policies.outbox_idle: must be at least 1s (a live replica renews its claims every third of it)")
	}
	if p.MaxTimeout != 0 && p.DefaultTimeout > p.MaxTimeout {
		return fmt.Errorf("policies.default_timeout: longer than policies.max_timeout")
	}
	routeNames := map[string]bool{}
	for name := range f.Routes {
		routeNames[name] = true
	}
	maxTimeout := time.Duration(p.MaxTimeout)
	if maxTimeout == 0 {
		maxTimeout = core.DefaultMaxTimeout
	}
	for _, name := range inOrder(f.Routes) {
		if _, err := core.CompileRules(name, f.Routes[name].rules(), routeNames, maxTimeout); err != nil {
			return err
		}
	}
	return nil
}

// inOrder is m's keys in order. The file's maps are checked in it, so that
// a file with several faults is refused for the same one on every start
// and reload, not for whichever a map's order meets first.
func inOrder[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// checkPeople checks the people, groups and routes' people entries the
// way core will, and that every token a person names is configured (a
// misspelt token name would quietly leave the person unrecognised).
func checkPeople(f File, tokens map[string]bool) error {
	for _, name := range inOrder(f.People) {
		p := f.People[name]
		if p.Email != "" {
			if err := checkAddress(p.Email); err != nil {
				return fmt.Errorf("people.%s.email: %w", name, err)
			}
		}
		if p.Ntfy != "" {
			if err := checkTopic(p.Ntfy); err != nil {
				return fmt.Errorf("people.%s.ntfy: %w", name, err)
			}
		}
		for i, tok := range p.Tokens {
			if !tokens[tok] {
				return fmt.Errorf("people.%s.tokens[%d]: no token named %q", name, i, tok)
			}
		}
		if p.Prefer != "" {
			if sf, err := core.ParseSurface(p.Prefer); err != nil || !sf.IsChat() {
				return fmt.Errorf("people.%s.prefer: %q is not %s", name, p.Prefer, core.SurfaceNames(core.ChatSurfaces))
			}
		}
	}
	routes := make(map[string]core.Route, len(f.Routes))
	for _, name := range inOrder(f.Routes) {
		r := f.Routes[name]
		for _, surface := range inOrder(r.Deciders) {
			for j, id := range r.Deciders[surface] {
				if strings.HasPrefix(id, core.PersonPrefix) || strings.HasPrefix(id, core.GroupPrefix) {
					return fmt.Errorf("routes.%s.deciders.%s[%d]: %q goes in routes.%s.people, where it applies on every surface", name, surface, j, id, name)
				}
			}
		}
		routes[name] = core.Route{Name: name, People: r.People, Deciders: map[core.Surface][]string{},
			Quorum: r.Quorum, MaxQuorum: r.MaxQuorum, Deny: core.DenyPolicy(r.Deny)}
		for surface, ids := range r.Deciders {
			routes[name].Deciders[core.Surface(surface)] = ids
		}
	}
	people, groups := f.peopleConfig()
	return core.ValidatePeople(people, groups, routes)
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
	if _, err := f.WriteString(v + "\n"); err != nil {
		f.Close()
		return "", false, err
	}
	return v, true, f.Close()
}
