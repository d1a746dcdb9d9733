package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// Reload triggers, as the event log and the log name them.
const (
	reloadSIGHUP = "sighup"
	reloadFile   = "file"
)

// reloader reads ASKBRIDGE_CONFIG again when told to (SIGHUP) and when
// the file changes (reload_watch.go says when), and puts a good file in
// force without a restart. The file is checked whole by the same parseFile as at start,
// then by core and the API; if any refuses it, nothing changes, and the
// refusal is logged, counted and recorded. Only the loop's goroutine
// reads files and swaps, so two readings never interleave.
type reloader struct {
	m        *Main
	getenv   func(string) string
	actorKey []byte
	// file is the file in force, digest its SHA-256; refused is the
	// digest of the last file refused since, so the same bad file is not
	// refused again at every change the watch sees.
	file    File
	digest  string
	loaded  time.Time
	refused string
	// start is the file the program started with: the settings in it
	// that need a restart stay as they were (restartOnly).
	start File
	// watched is the watch on the file's directories (watch); its zero
	// value watches nothing, and the file is read on SIGHUP only.
	watched
}

// newReloader sets the file in force (s's) as the one the digest
// endpoint reports and starts watching its directory; runReloads then
// reloads it until the program stops.
func (m *Main) newReloader(s Settings, actorKey []byte) *reloader {
	r := &reloader{m: m, getenv: m.Getenv, actorKey: actorKey, file: s.File,
		digest: s.fileDigest, loaded: m.now(), start: s.File}
	if r.getenv == nil {
		r.getenv = os.Getenv
	}
	m.api.SetConfigDigest(client.ConfigDigest{Digest: r.digest, LoadedAt: r.loaded})
	r.watch()
	return r
}

// unchanged reports whether a reading (its digest, or err when the file
// could not be read) is of the file in force (with no refusal since) or
// of the one last refused: a change seen by the watch that leaves those
// bytes (a touch, a file written as it was, a ConfigMap
// swapped to the same content) changes nothing and is not recorded. The
// file in force put back after a refusal (a bad edit undone, a
// deleted file restored) is read, though: else the refusal would stand on
// the digest endpoint and in the event log as this replica's last word on
// a file it runs. A file that cannot be read is never unchanged.
func (r *reloader) unchanged(digest string, err error) bool {
	return err == nil && ((digest == r.digest && r.refused == "") || digest == r.refused)
}

// configDigest is the SHA-256 of a file's bytes, in hex: the digest the
// endpoint and the event log name a file by (as LoadSettings's
// fileDigest).
func configDigest(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// take applies or refuses a reading of the file (raw, or err when it
// could not be read), records it and counts it.
func (r *reloader) take(ctx context.Context, trigger string, raw []byte, err error) {
	path := r.m.Settings.ConfigPath
	digest := configDigest(raw)
	rec := core.Reload{Trigger: trigger, Replica: r.m.ReplicaID, Digest: digest}
	switch {
	case err != nil:
		err = fmt.Errorf("ASKBRIDGE_CONFIG: %w", err)
	case holdsNothing(raw):
		// At start an empty file is a valid configuration of nothing; on
		// a reload it is one caught mid-write (a shell's > truncates it
		// first, a write cut short may end after its opening comments or
		// its ---), which would take every token and route away.
		err = refuseNothing(path, raw)
	default:
		var f File
		if f, err = parseFile(raw, r.getenv); err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		} else {
			rec.Changed, rec.Restart, err = r.apply(f)
		}
	}
	// The digest endpoint changes last, so whoever sees it change finds
	// the event and the count already there.
	now := r.m.now()
	if err != nil {
		r.refused = digest
		r.m.Log.Error().Err(err).Str("trigger", trigger).Str("digest", digest).
			Msg("configuration refused: the running configuration stays as it was")
		r.record(ctx, rec, err.Error())
		r.m.Metrics.Reloaded(false, nil)
		r.m.api.SetConfigDigest(client.ConfigDigest{Digest: r.digest, LoadedAt: r.loaded,
			Refused: &client.RefusedConfig{Digest: digest, At: now, Error: err.Error()}})
		return
	}
	rec.Applied = true
	r.digest, r.loaded, r.refused = digest, now, ""
	r.m.Log.Info().Str("trigger", trigger).Str("digest", digest).Strs("changed", rec.Changed).Msg("configuration reloaded")
	for _, key := range rec.Restart {
		r.m.Log.Warn().Str("setting", key).Msg("changed in the configuration file, but it takes a restart: the running value stays until then")
	}
	r.record(ctx, rec, "")
	r.m.Metrics.Reloaded(true, routeNames(r.m.Settings.withFile(r.file)))
	r.m.api.SetConfigDigest(client.ConfigDigest{Digest: digest, LoadedAt: now})
}

// record appends the reading to the event log; a log that cannot be
// written is logged, and the reading stands.
func (r *reloader) record(ctx context.Context, rec core.Reload, reason string) {
	if _, err := r.m.Service.RecordReload(ctx, rec, reason); err != nil {
		r.m.Log.Error().Err(err).Msg("could not record the configuration reload in the event log")
	}
}

// apply checks f as core and the API will take it, then puts it in force:
// core's routes, people, groups, rules and policies and the tokens of the
// API, the console and the agent doors, all in core's one swap, so a
// request that arrives after it meets the new file's tokens with its
// routes, never the old tokens with the new routes (one already let in
// goes on as admitted, as in-flight requests do); then the
// extra directives, the console's OIDC people and the webhooks. It
// returns what changed, and the settings changed that wait for a restart
// (left as they are).
func (r *reloader) apply(f File) (changed, restart []string, err error) {
	restart = keepStarted(r.start, &f)
	cfg, err := r.check(f)
	if err != nil {
		return nil, nil, err
	}
	if err := r.m.Service.Reconfigure(cfg); err != nil {
		return nil, nil, err
	}
	if err := r.m.api.SetExtras(f.Directives); err != nil {
		// Validated above: unreachable short of a bug, and then the
		// directives in force stay and say so.
		r.m.Log.Error().Err(err).Msg("the reloaded directives were refused after the routes applied")
	}
	if r.start.OIDC != nil {
		r.m.oidcPeople.replace(r.start.OIDC, f.People) // the provider's settings wait for a restart
	}
	if err := r.m.webhooks.Reconfigure(webhookSettings(f)); err != nil {
		// core checked the same allow list and checkWebhooks the same
		// secrets: unreachable short of a bug.
		r.m.Log.Error().Err(err).Msg("the reloaded webhook settings were refused after the routes applied")
	}
	changed = sectionsChanged(r.file, f)
	r.file = f
	return changed, restart, nil
}

// check checks f as core and the API will take it, changing nothing, and
// returns core's configuration of it, carrying the API's tokens
// (core.Config.Tokens) for core's swap to put in force with the routes.
func (r *reloader) check(f File) (core.Config, error) {
	// The chat platforms are the environment's, read once at start.
	cfg, err := checkServed(r.m.Settings, f, r.actorKey, r.m.running())
	if err != nil {
		return core.Config{}, err
	}
	tokens := r.m.apiTokens(f)
	if err := (httpapi.Options{Tokens: tokens, Extras: f.Directives}).Validate(); err != nil {
		return core.Config{}, err
	}
	if cfg.Tokens, err = httpapi.NewRing(tokens); err != nil {
		return core.Config{}, err // checked just above
	}
	return cfg, nil
}

// restartOnly are the file's settings that cannot change while the
// program runs: the shard count (ids already given out depend on it), the
// outbox's idle time and the webhooks' give-up age (each courier took them
// at start), and the oidc section (the console's provider was set up at
// start). The environment (listen address, store, platforms) is read once
// at start and cannot change under a process.
var restartOnly = []struct {
	name string
	same func(start, now File) bool
	keep func(start File, now *File)
}{
	{"policies.shards", func(a, b File) bool { return a.Policies.Shards == b.Policies.Shards },
		func(a File, b *File) { b.Policies.Shards = a.Policies.Shards }},
	{"policies.outbox_idle", func(a, b File) bool { return a.Policies.OutboxIdle == b.Policies.OutboxIdle },
		func(a File, b *File) { b.Policies.OutboxIdle = a.Policies.OutboxIdle }},
	{"webhooks.give_up_after", func(a, b File) bool { return a.Webhooks.GiveUpAfter == b.Webhooks.GiveUpAfter },
		func(a File, b *File) { b.Webhooks.GiveUpAfter = a.Webhooks.GiveUpAfter }},
	{"oidc", func(a, b File) bool { return reflect.DeepEqual(a.OIDC, b.OIDC) },
		func(a File, b *File) { b.OIDC = a.OIDC }},
}

// keepStarted puts back in now every restart-only setting that differs
// from what the program started with, and names them: each stays as it
// runs until a restart, whole (a reloaded file takes none of it in part).
func keepStarted(start File, now *File) []string {
	var changed []string
	for _, s := range restartOnly {
		if !s.same(start, *now) {
			changed = append(changed, s.name)
			s.keep(start, now)
		}
	}
	return changed
}

// sectionsChanged names what differs between two files: each route added,
// changed or removed (routes.<name>), and the other sections whole.
func sectionsChanged(old, now File) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(old.Routes)) {
		if r, ok := now.Routes[name]; !ok || !reflect.DeepEqual(r, old.Routes[name]) {
			out = append(out, "routes."+name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(now.Routes)) {
		if _, ok := old.Routes[name]; !ok {
			out = append(out, "routes."+name)
		}
	}
	slices.Sort(out)
	for _, s := range []struct {
		name     string
		old, now any
	}{
		{"people", old.People, now.People},
		{"groups", old.Groups, now.Groups},
		{"tokens", old.Tokens, now.Tokens},
		{"policies", old.Policies, now.Policies},
		{"directives", old.Directives, now.Directives},
		{"webhooks", old.Webhooks, now.Webhooks},
	} {
		if !reflect.DeepEqual(s.old, s.now) {
			out = append(out, s.name)
		}
	}
	return out
}

// withFile is s reading f instead of its own file.
func (s Settings) withFile(f File) Settings {
	s.File = f
	return s
}

// routeNames are the routes core runs with s (the default route when the
// file names none).
func routeNames(s Settings) []string {
	return slices.Sorted(maps.Keys(s.coreConfig(nil).Routes))
}

// apiTokens are the tokens the API and the console take: the admin
// token kept in the data directory, and the file's.
func (m *Main) apiTokens(f File) []httpapi.Token {
	tokens := []httpapi.Token{{Name: adminTokenName, Secret: m.AdminToken, Role: httpapi.RoleAdmin}}
	for _, t := range f.Tokens {
		role, _ := httpapi.ParseRole(t.Role) // checked by parseFile
		tokens = append(tokens, httpapi.Token{Name: t.Name, Secret: t.Token.Reveal(), Role: role})
	}
	return tokens
}
