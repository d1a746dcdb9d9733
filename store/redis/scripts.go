package redis

import (
	"context"
	"embed"
	"fmt"
	"regexp"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// One script per transition. Each file states its KEYS, ARGV and return
// codes; common.lua holds the codes and helpers, of which each script
// is prepended those it uses (commonDefs).
var (
	createScript        = loadScript("create")
	resolveScript       = loadScript("resolve")
	renotifyScript      = loadScript("renotify")
	recordMessageScript = loadScript("record_message")
	endRunScript        = loadScript("end_run")
	appendScript        = loadScript("append")
	purgeScript         = loadScript("purge")
	claimScript         = loadScript("claim")
	leaseScript         = loadScript("lease")
	releaseScript       = loadScript("release")
	onceClaimScript     = loadScript("once_claim")
	onceConfirmScript   = loadScript("once_confirm")
	beatScript          = loadScript("beat")
	retryScript         = loadScript("retry")
	ackScript           = loadScript("ack")
	extendScript        = loadScript("extend")
	leaveScript         = loadScript("leave")
	cancelScript        = loadScript("cancel")
	laterScript         = loadScript("later")
	readScript          = loadScript("read")
	closedCatchUpScript = loadScript("closed_catchup")
	migrateScript       = loadScript("migrate")
	migrateShardScript  = loadScript("migrate_shard")
	eventMarkScript     = loadScript("event_mark")
	setValueIfScript    = loadScript("set_value_if")
	refundScript        = loadScript("refund")
)

// Return codes, as common.lua defines them.
const (
	codeOK            = 1
	codeNotFound      = 2
	codeNotOpen       = 3
	codeExists        = 4
	codeRunEnded      = 5
	codeDeadlineMoved = 7
	codeDuplicate     = 8
	codeApplied       = 10
	codeStale         = 11
)

type script struct {
	name string
	// The command's first arguments, each boxed once: EVALSHA and the
	// hash, or, for a Redis that does not have the script yet, EVAL and
	// the source.
	sha, eval [2]any
}

func loadScript(name string) script {
	body, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err)
	}
	// The body runs as a function, so that whatever it returns goes back
	// through common.lua's with_head, which adds the audit chain's head.
	main := "\nlocal function script_body()\n" + string(body) + "\nend\nreturn with_head(script_body())\n"
	src := commonDefs.needed(main) + main
	return script{name: name, sha: [2]any{"evalsha", goredis.NewScript(src).Hash()}, eval: [2]any{"eval", src}}
}

// commonDefs are common.lua's definitions, of which each script gets
// those it uses.
var commonDefs = func() luaDefs {
	common, err := luaFiles.ReadFile("lua/common.lua")
	if err != nil {
		panic(err)
	}
	return splitDefs(string(common))
}()

// luaDef is one top-level definition of common.lua: the local it defines
// and its text.
type luaDef struct {
	name string
	text string
}

// luaDefs are a Lua file's top-level definitions, in its order.
type luaDefs []luaDef

var (
	luaDefLine = regexp.MustCompile(`^local\s+(?:function\s+)?([A-Za-z_][A-Za-z0-9_]*)`)
	luaName    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// splitDefs splits Lua source into its top-level local definitions. A
// definition starts at a line beginning "local" and runs to the next line
// beginning "local" or "--" (a function's body is indented and its "end"
// is not); top-level comments are dropped.
func splitDefs(src string) luaDefs {
	var defs luaDefs
	in := false
	for line := range strings.Lines(src) {
		switch {
		case strings.HasPrefix(line, "local"):
			m := luaDefLine.FindStringSubmatch(line)
			if m == nil {
				panic(fmt.Sprintf("common.lua: cannot read the definition %q", line))
			}
			defs = append(defs, luaDef{name: m[1], text: line})
			in = true
		case strings.HasPrefix(line, "--"):
			in = false
		case in:
			defs[len(defs)-1].text += line
		}
	}
	return defs
}

// needed is the text of the definitions src uses, directly or through
// others, in their order. Every script call runs its definitions before
// its body, so one it does not use would cost a closure made and
// collected on every call (BENCHMARKS.md counts what that costs).
func (defs luaDefs) needed(src string) string {
	uses := map[string]bool{}
	for _, n := range luaName.FindAllString(src, -1) {
		uses[n] = true
	}
	take := make([]bool, len(defs))
	// A definition uses only those before it, so one pass from the end
	// finds them all.
	for i := len(defs) - 1; i >= 0; i-- {
		if uses[defs[i].name] {
			take[i] = true
			for _, n := range luaName.FindAllString(defs[i].text, -1) {
				uses[n] = true
			}
		}
	}
	var b strings.Builder
	for i, d := range defs {
		if take[i] {
			b.WriteString(d.text)
		}
	}
	return b.String()
}

// Hash is the script's SHA1, as EVALSHA names it.
func (sc script) Hash() string { return sc.sha[1].(string) }

// scriptHook, when set (by tests), sees the keys of every script call
// before it runs.
var scriptHook func(name string, keys []string)

// reply is what every script returns: {code, n, fields, list}, and,
// from a script that appended events, the audit chain's new head
// ("<shard> <n> <hash>", see common.lua's with_head).
type reply struct {
	code   int64
	n      int64
	fields map[string]string
	list   []string
	head   string
}

// run runs a script (EVALSHA, falling back to EVAL) and decodes its reply.
func (s *Store) run(ctx context.Context, sc script, keys []string, args ...any) (reply, error) {
	if scriptHook != nil {
		scriptHook(sc.name, keys)
	}
	cmd := scriptArgs(len(keys), len(args))
	for _, k := range keys {
		cmd = append(cmd, k)
	}
	return s.runArgs(ctx, sc, append(cmd, args...))
}

// scriptArgs begins a script command of nkeys keys and nargs arguments:
// room for the command and the script (filled in as it is sent), the
// number of keys, and room for the keys and then the arguments, to be
// appended.
func scriptArgs(nkeys, nargs int) []any {
	cmd := make([]any, 3, 3+nkeys+nargs)
	cmd[2] = nkeys
	return cmd
}

// runArgs runs sc with cmd, which scriptArgs began, and decodes its
// reply. A caller with keys boxed already (Commit's constant ones)
// appends them as they are, which saves an allocation per key.
func (s *Store) runArgs(ctx context.Context, sc script, cmd []any) (reply, error) {
	v, err := s.runScript(ctx, s.hotStart(), sc, cmd)
	s.hotEnd()
	if err != nil {
		return reply{}, fmt.Errorf("script %s: %w", sc.name, err)
	}
	r, err := parseReply(sc.name, v)
	if err == nil && r.head != "" {
		s.heads.see(r.head)
	}
	return r, err
}

// runScript runs sc with cmd through the autopipeliner ap, or through the
// client when ap is nil, as go-redis's Script.Run does: by hash, and
// whole if Redis does not have it (after a restart or failover).
func (s *Store) runScript(ctx context.Context, ap *goredis.AutoPipeliner, sc script, cmd []any) (any, error) {
	v, err := s.send(ctx, ap, sc.sha, cmd)
	if goredis.HasErrorPrefix(err, "NOSCRIPT") {
		return s.send(ctx, ap, sc.eval, cmd)
	}
	return v, err
}

// send sends cmd, begun with how (EVALSHA and the hash, or EVAL and the
// source), and waits for its reply. Each send is a command of its own,
// since a command keeps its result; they share cmd, as the EVAL that
// follows a refused EVALSHA replaces its first two arguments only once
// the EVALSHA has had its reply. Through the autopipeliner the wait is
// no longer than ctx allows: a command once queued there runs whatever
// becomes of its caller, so a caller that gives up learns only that, as
// after a timeout on a connection of its own.
func (s *Store) send(ctx context.Context, ap *goredis.AutoPipeliner, how [2]any, cmd []any) (any, error) {
	cmd[0], cmd[1] = how[0], how[1]
	c := goredis.NewCmd(ctx, cmd...)
	if cmd[2] != 0 {
		c.SetFirstKeyPos(3) // a cluster routes it by its first key
	}
	if ap == nil {
		_ = s.client.Process(ctx, c)
		return c.Result()
	}
	if err := ap.Submit(ctx, c).WaitContext(ctx); err != nil {
		return nil, err
	}
	return c.Val(), nil
}

func parseReply(name string, v any) (reply, error) {
	a, ok := v.([]any)
	if !ok || (len(a) != 4 && len(a) != 5) {
		return reply{}, fmt.Errorf("script %s: unexpected reply %T", name, v)
	}
	var r reply
	if r.code, ok = a[0].(int64); !ok {
		return reply{}, fmt.Errorf("script %s: unexpected code %T", name, a[0])
	}
	if r.n, ok = a[1].(int64); !ok {
		return reply{}, fmt.Errorf("script %s: unexpected number %T", name, a[1])
	}
	fields, _ := a[2].([]any)
	if len(fields) > 0 {
		r.fields = make(map[string]string, len(fields)/2)
		for i := 0; i+1 < len(fields); i += 2 {
			r.fields[str(fields[i])] = str(fields[i+1])
		}
	}
	list, _ := a[3].([]any)
	for _, x := range list {
		r.list = append(r.list, str(x))
	}
	if len(a) == 5 {
		r.head = str(a[4])
	}
	return r, nil
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return fmt.Sprint(x)
	}
	return fmt.Sprint(v)
}

// outcome maps a transition script's code to core's errors, in one place,
// right after the call. The question is decoded from the hash the script
// returned, so a loser's ClosedError carries the question as stored.
func (s *Store) outcome(op string, id core.QuestionID, r reply) (*core.Question, error) {
	var q *core.Question
	if r.fields != nil {
		var err error
		if q, err = decodeQuestion(id, r.fields); err != nil {
			return nil, core.Internal(op, err)
		}
	}
	switch r.code {
	case codeOK:
		return q, nil
	case codeNotFound:
		return nil, core.ErrNotFound
	case codeNotOpen:
		return nil, &core.ClosedError{Question: q}
	case codeExists:
		return nil, core.Errorf(core.CodeConflict, op, "question %s already exists", id)
	case codeRunEnded:
		return nil, core.Errorf(core.CodeConflict, op, "the run of question %s has ended", id)
	case codeStale:
		return nil, &core.StaleError{Question: q}
	case codeApplied:
		return nil, &core.AppliedError{Question: q}
	case codeDeadlineMoved:
		return nil, core.Errorf(core.CodeConflict, op, "the deadline of question %s has moved", id)
	}
	return nil, core.Internal(op, fmt.Errorf("script returned unknown code %d", r.code))
}

// surfaceList names the outbox streams that end a script's KEYS, in
// keys.outboxes order.
var surfaceList = func() string {
	names := make([]string, len(core.OutboxSurfaces))
	for i, s := range core.OutboxSurfaces {
		names[i] = string(s)
	}
	return strings.Join(names, " ")
}()
