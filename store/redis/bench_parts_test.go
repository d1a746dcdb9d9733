package redis_test

import (
	"strconv"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// closeParts are what resolve.lua does beyond minimalScript, in the order
// BenchmarkCloseParts adds them, each a piece of Lua run before the
// minimal script's PUBLISH. KEYS: 1 question hash, 2 events, 3 wake-up
// channel, 4 audit chain head, 5 resolution, 6 outbox stream. ARGV: 1
// version, 2 event, 3 question id, 4 attempt, 5 resolution, 6 card, 7
// delivery key, then padding to a close's count of arguments.
var closeParts = []struct{ name, lua string }{
	// The guard: the question's state, version, attempts and events in
	// one read, and the attempt looked for among those applied.
	{"guard", `local f = redis.call('HMGET', KEYS[1], 'state', 'ver', 'at', 'ev')
if f[3] and string.find(' ' .. f[3] .. ' ', ' ' .. ARGV[4] .. ' ', 1, true) then return 0 end`},
	// The audit chain: read the head, hash the link, write the head.
	{"chain", `local head = redis.call('GET', KEYS[4]) or ''
local h = redis.sha1hex(head .. '\n' .. ARGV[2])
redis.call('SET', KEYS[4], '1 ' .. h)`},
	// The resolution, in a key of its own.
	{"resolution", `redis.call('SET', KEYS[5], ARGV[5])`},
	// The card's edit, on its surface's outbox.
	{"card", `redis.call('XADD', KEYS[6], '*', 'u', ARGV[6], 'k', ARGV[7], 't', ARGV[1])`},
}

// closeArgs is how many arguments a close sends resolve.lua (one card to
// edit, one event).
const closeArgs = 23

// closeStep is one script of BenchmarkCloseParts: the minimal script
// with some of closeParts, sent args arguments.
type closeStep struct {
	name   string
	script *goredis.Script
	args   int
}

// closeSteps are the minimal script, then with each of closeParts added
// in turn, then with as many arguments as a close sends.
func closeSteps() []closeStep {
	lua := []string{`local v = redis.call('HGET', KEYS[1], 'ver')
if (v or '0') ~= ARGV[1] then return 0 end`}
	script := func(lua []string) *goredis.Script {
		return goredis.NewScript(strings.Join(lua, "\n") + `
redis.call('HSET', KEYS[1], 'ver', tonumber(ARGV[1]) + 1, 'state', 'answered')
redis.call('XADD', KEYS[2], '*', 'e', ARGV[2])
redis.call('PUBLISH', KEYS[3], ARGV[3])
return 1`)
	}
	steps := []closeStep{{"minimal", script(lua), 7}}
	for _, p := range closeParts {
		lua = append(lua, p.lua)
		steps = append(steps, closeStep{"+" + p.name, script(lua), 7})
	}
	return append(steps, closeStep{"+args", script(lua), closeArgs})
}

// BenchmarkCloseParts measures where a close's Redis time goes over the
// minimal script's: each of closeSteps reported as the server's time per
// call, 50 callers at once as BenchmarkResolve runs them. The last step is
// shaped like resolve.lua; what it still lacks of its time is the rest of
// its Lua. BenchmarkCloseInstructions counts the same steps.
func BenchmarkCloseParts(b *testing.B) {
	for _, st := range closeSteps() {
		b.Run(st.name, func(b *testing.B) {
			b.ResetTimer()
			b.ReportMetric(partTime(b, st.script, b.N, st.args), "server-µs/op")
			b.StopTimer()
			flush(b)
		})
	}
}

// partTime runs sc n times from 50 goroutines (scriptTime), each call on
// a question of its own with arguments the size of a close's, and returns
// its server time per call.
func partTime(b *testing.B, sc *goredis.Script, n, nargs int) float64 {
	p := "{" + randomPrefix() + "}"
	return scriptTime(b, sc, n, func(i string) []string { return partKeys(p, i) }, partArgs(nargs))
}

// partKeys are the keys of a close step's call i, under prefix p.
func partKeys(p, i string) []string {
	return []string{p + ":q:" + i, p + ":events", p + ":wake", p + ":seq", p + ":r:" + i, p + ":out"}
}

// partArgs are nargs arguments the size of a close's.
func partArgs(nargs int) []any {
	args := []any{"0", strings.Repeat("e", 400), "aaaaaaaaaaaaaaaaa", "47owJK4LRWg.1", strings.Repeat("r", 434), strings.Repeat("c", 150), "aaaaaaaaaaaaaaaaa/update/2/1"}
	for len(args) < nargs {
		args = append(args, "argument-"+strconv.Itoa(len(args)))
	}
	return args
}
