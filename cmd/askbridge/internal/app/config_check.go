package app

// The configuration file's checks: parseFile decodes it and refuses, by
// the key, whatever would not hold (config.go holds its types).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/directive"
)

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
		return f, decodeError(err, raw)
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
	// Last, core's whole check of the file as serve puts it in force, so
	// that what passes here is what serve runs: a fault only core knows
	// is refused here too, with the file's path before it (and a rule's
	// by its key, as checkPolicies names the others).
	// The actor key is a stand-in: core only checks that there is one.
	if _, err := core.New(nil, Settings{File: f}.coreConfig([]byte("parseFile")), nil); err != nil {
		var re *core.RuleError
		if errors.As(err, &re) {
			return f, re
		}
		return f, err
	}
	return f, nil
}

// checkServed checks f as serve puts it in force under s's environment,
// with the chat surfaces running: core's configuration of it, and that
// nothing in it is sent to a surface that is not running
// (checkSurfaces), which takes core to say where direct messages go (a
// core of the file alone, with no store, says it). It returns core's
// configuration. A reload checks each file with it before anything is put
// in force, and config check with the surfaces the environment turns on.
func checkServed(s Settings, f File, actorKey []byte, running map[core.Surface]bool) (core.Config, error) {
	cfg := s.withFile(f).coreConfig(actorKey)
	probe, err := core.New(nil, cfg, nil)
	if err != nil {
		return core.Config{}, err
	}
	if err := checkSurfaces(f, probe.DMs(), running); err != nil {
		return core.Config{}, s.fileError(err)
	}
	return cfg, nil
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
		r.Rooms, r.oneWay = append(r.Rooms, rooms...), len(rooms)
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
		if room.Surface == core.SurfaceTelegram {
			// A chat id, @<user id> (a direct message), or a topic's
			// <chat id>:<topic id> (a forum's, or a private chat's with
			// topics on): a bad one is refused here rather than at every
			// delivery.
			if err := telegram.CheckRoom(room.ID); err != nil {
				return fmt.Errorf("%s.rooms[%d].id: %w", key, i, err)
			}
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
			switch role, ok := strings.CutPrefix(id, "role:"); {
			case ok && strings.TrimSpace(role) == "":
				return fmt.Errorf("%s.deciders.%s[%d]: %q names no role: write role:<name>", key, surface, j, id)
			case ok && strings.TrimSpace(role) != role:
				// "role: S0ADMINS" names the role " S0ADMINS", which no
				// platform or token has: it would match no one.
				return fmt.Errorf("%s.deciders.%s[%d]: %q has spaces around its role: write role:<name>", key, surface, j, id)
			}
			if core.ParseDecider(id).Role != "" && !slices.Contains(core.RoleSurfaces, core.Surface(surface)) {
				return fmt.Errorf("%s.deciders.%s[%d]: %q would match no one: role entries are for %s only", key, surface, j, id, core.SurfaceNames(core.RoleSurfaces))
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
// Every check the API makes of its tokens is made here too, so that its
// error names the file's index (the API counts the generated admin token
// first).
func checkTokens(f *File, getenv func(string) string) (map[string]bool, error) {
	names := map[string]bool{}
	secrets := map[Secret]int{}
	for i, t := range f.Tokens {
		key := fmt.Sprintf("tokens[%d]", i)
		if strings.TrimSpace(t.Name) == "" {
			return nil, fmt.Errorf("%s.name is required", key)
		}
		if len(t.Name) > 128 {
			return nil, fmt.Errorf("%s.name is longer than 128 bytes", key)
		}
		if t.Name == adminTokenName {
			return nil, fmt.Errorf("%s.name: %q is the generated admin token's name: choose another", key, t.Name)
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
			v, err := secretFromEnv(key+".token_env", t.TokenEnv, getenv)
			if err != nil {
				return nil, err
			}
			f.Tokens[i].Token = v
		case t.Token == "":
			return nil, fmt.Errorf("%s: token or token_env is required", key)
		}
		if len(f.Tokens[i].Token) < 16 {
			return nil, fmt.Errorf("%s: the token must be at least 16 characters", key)
		}
		if j, ok := secrets[f.Tokens[i].Token]; ok {
			return nil, fmt.Errorf("%s (%s): the secret is tokens[%d]'s too: give each token its own", key, t.Name, j)
		}
		secrets[f.Tokens[i].Token] = i
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
	// core's own limits (bind), here so that the refusal names the key.
	if p.Retention != 0 && time.Duration(p.Retention) < core.MinRetention {
		return fmt.Errorf("policies.retention: must be at least %s (a closed question, and the key a retried ask finds it by, must outlive the agent's wait and its retries)", core.MinRetention)
	}
	if least := 2 * core.HeartbeatInterval; p.DowntimeThreshold != 0 && time.Duration(p.DowntimeThreshold) < least {
		return fmt.Errorf("policies.downtime_threshold: must be at least %s, twice the heartbeat interval (a graceful restart would count as a downtime)", least)
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
