package redis

import (
	"context"
	"embed"
	"fmt"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// One script per transition. Each file states its KEYS, ARGV and return
// codes; common.lua, prepended to each, holds the codes and helpers.
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
	retryScript         = loadScript("retry")
	extendScript        = loadScript("extend")
	leaveScript         = loadScript("leave")
	dropHeldScript      = loadScript("drop_held")
	readScript          = loadScript("read")
)

// Return codes, as common.lua defines them.
const (
	codeOK            = 1
	codeNotFound      = 2
	codeNotOpen       = 3
	codeExists        = 4
	codeRunEnded      = 5
	codeItemAnswered  = 6
	codeDeadlineMoved = 7
	codeDuplicate     = 8
	codeVoted         = 9
)

type script struct {
	name string
	src  string // what the Script holds, for an EVAL through the autopipeliner
	*goredis.Script
}

func loadScript(name string) script {
	common, err := luaFiles.ReadFile("lua/common.lua")
	if err != nil {
		panic(err)
	}
	body, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err)
	}
	src := string(common) + "\n" + string(body)
	return script{name: name, src: src, Script: goredis.NewScript(src)}
}

// scriptHook, when set (by tests), sees the keys of every script call
// before it runs.
var scriptHook func(name string, keys []string)

// reply is what every script returns: {code, n, fields, list}.
type reply struct {
	code   int64
	n      int64
	fields map[string]string
	list   []string
}

// run runs a script (EVALSHA, falling back to EVAL) and decodes its reply.
func (s *Store) run(ctx context.Context, sc script, keys []string, args ...any) (reply, error) {
	if scriptHook != nil {
		scriptHook(sc.name, keys)
	}
	var v any
	var err error
	if ap := s.hotStart(); ap != nil {
		v, err = s.runPipelined(ctx, ap, sc, keys, args)
	} else {
		v, err = sc.Run(ctx, s.client, keys, args...).Result()
	}
	s.hotEnd()
	if err != nil {
		return reply{}, fmt.Errorf("script %s: %w", sc.name, err)
	}
	return parseReply(sc.name, v)
}

// runPipelined runs sc through the autopipeliner ap and waits for it no
// longer than ctx allows. A command once queued there runs whatever
// becomes of its caller, so a caller that gives up learns only that, as
// after a timeout on a connection of its own. A script Redis does not
// have yet (after a restart or failover) is sent whole.
func (s *Store) runPipelined(ctx context.Context, ap *goredis.AutoPipeliner, sc script, keys []string, args []any) (any, error) {
	v, err := submitScript(ctx, ap, "evalsha", sc.Hash(), keys, args)
	if goredis.HasErrorPrefix(err, "NOSCRIPT") {
		return submitScript(ctx, ap, "eval", sc.src, keys, args)
	}
	return v, err
}

// submitScript queues one EVALSHA or EVAL (how, with what: the hash or
// the source) on ap and waits for it within ctx.
func submitScript(ctx context.Context, ap *goredis.AutoPipeliner, how, what string, keys []string, args []any) (any, error) {
	a := make([]any, 0, 3+len(keys)+len(args))
	a = append(a, how, what, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	a = append(a, args...)
	cmd := goredis.NewCmd(ctx, a...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3) // a cluster routes it by its first key
	}
	if err := ap.Submit(ctx, cmd).WaitContext(ctx); err != nil {
		return nil, err
	}
	return cmd.Val(), nil
}

func parseReply(name string, v any) (reply, error) {
	a, ok := v.([]any)
	if !ok || len(a) != 4 {
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
func (s *Store) outcome(op, id string, r reply) (*core.Question, error) {
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
	case codeItemAnswered:
		return nil, core.Errorf(core.CodeConflict, op, "a form item of question %s already has an answer", id)
	case codeVoted:
		return nil, core.AlreadyCounted(op)
	case codeDeadlineMoved:
		return nil, core.Errorf(core.CodeConflict, op, "the deadline of question %s has moved", id)
	}
	return nil, core.Internal(op, fmt.Errorf("script returned unknown code %d", r.code))
}

// surfaceList names the outbox streams that end a script's KEYS, in
// keys.outboxes order.
var surfaceList = func() string {
	names := make([]string, len(core.ChatSurfaces))
	for i, s := range core.ChatSurfaces {
		names[i] = string(s)
	}
	return strings.Join(names, " ")
}()
