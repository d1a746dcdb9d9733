package redis_test

import (
	"strconv"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// closeShape is one way a close could be laid out in Redis, for
// BenchmarkCloseShapes: whether the resolution goes into the question's
// hash (one HSET) or a key of its own (a SET beside it), whether the
// script publishes the wake-up, and how many closes of one shard share a
// call (a group commit, which reads and writes the audit chain's head
// once for all of them).
type closeShape struct {
	name       string
	resInHash  bool
	publish    bool
	perCall    int
	scriptText string
}

// closeShapes are resolve.lua's shape today (its writes, without its
// replay and delayed-update branches) and the shapes a redesign could
// take, one saving at a time and then together.
func closeShapes() []closeShape {
	shapes := []closeShape{
		{name: "today", publish: true, perCall: 1},
		{name: "res-in-hash", resInHash: true, publish: true, perCall: 1},
		{name: "res-in-hash,no-publish", resInHash: true, perCall: 1},
		{name: "grouped-4", publish: true, perCall: 4},
		{name: "res-in-hash,no-publish,grouped-4", resInHash: true, perCall: 4},
	}
	for i := range shapes {
		shapes[i].scriptText = shapes[i].lua()
	}
	return shapes
}

// lua is the shape's script. KEYS: 1 the audit chain's head, 2 events,
// 3 wake-up channel, then per close its hash, resolution and outbox
// stream. ARGV: 1 the closes in the call, then per close closeArgs
// arguments laid out as partArgs makes them.
func (sh closeShape) lua() string {
	write := `redis.call('SET', KEYS[kb + 2], ARGV[ab + 5])
    redis.call('HSET', q, 'ver', tonumber(ARGV[ab + 1]) + 1, 'state', 'answered', 'at', ARGV[ab + 4])`
	if sh.resInHash {
		write = `redis.call('HSET', q, 'ver', tonumber(ARGV[ab + 1]) + 1, 'state', 'answered', 'at', ARGV[ab + 4], 'res', ARGV[ab + 5])`
	}
	publish := ""
	if sh.publish {
		publish = `redis.call('PUBLISH', KEYS[3], ARGV[ab + 3])`
	}
	return `local head = redis.call('GET', KEYS[1]) or '-'
for i = 0, tonumber(ARGV[1]) - 1 do
  local kb, ab = 3 + i * 3, 1 + i * ` + strconv.Itoa(closeArgs) + `
  local q = KEYS[kb + 1]
  local f = redis.call('HMGET', q, 'state', 'ver', 'at', 'ev')
  local sent_again = f[3] and string.find(' ' .. f[3] .. ' ', ' ' .. ARGV[ab + 4] .. ' ', 1, true)
  if not sent_again and (f[2] or '0') == ARGV[ab + 1] then
    head = redis.sha1hex(head .. '\n' .. ARGV[ab + 2])
    ` + write + `
    redis.call('XADD', KEYS[2], '*', 'e', ARGV[ab + 2], 'c', head)
    redis.call('XADD', KEYS[kb + 3], '*', 'u', ARGV[ab + 6], 'k', ARGV[ab + 7], 't', ARGV[ab + 1])
    ` + publish + `
  end
end
redis.call('SET', KEYS[1], head)
return 1`
}

// BenchmarkCloseShapes measures what a redesign of the close could save
// in Redis time (issue 24's target: the close at most twice the minimal
// script): each shape's server time per close, 50 callers at once, with
// the minimal script measured beside it in the same run. A grouped shape
// reports its time per close (a call's time over the closes in it).
func BenchmarkCloseShapes(b *testing.B) {
	for _, sh := range closeShapes() {
		b.Run(sh.name, func(b *testing.B) {
			p := "{" + randomPrefix() + "}"
			one := partArgs(closeArgs)
			args := []any{sh.perCall}
			for range sh.perCall {
				args = append(args, one...)
			}
			calls := (b.N + sh.perCall - 1) / sh.perCall
			perCall := scriptTime(b, goredis.NewScript(sh.scriptText), calls, func(i string) []string {
				keys := []string{p + ":seq", p + ":events", p + ":wake"}
				for j := range sh.perCall {
					id := i + "." + strconv.Itoa(j)
					keys = append(keys, p+":q:"+id, p+":r:"+id, p+":out")
				}
				return keys
			}, args)
			perClose := perCall / float64(sh.perCall)
			b.ReportMetric(perClose, "server-µs/close")
			if minimal := minimalScriptTime(b, b.N); minimal > 0 {
				b.ReportMetric(minimal, "minimal-µs/op")
				b.ReportMetric(perClose/minimal, "x-minimal")
			}
			b.StopTimer()
			flush(b)
		})
	}
}

// TestCloseShapesWrite checks that every shape BenchmarkCloseShapes times
// does a close's writes: the version moved, the resolution and the event
// and card written, so a shape cannot look cheap by doing less.
func TestCloseShapesWrite(t *testing.T) {
	c := sharedClient()
	for _, sh := range closeShapes() {
		p := "{" + randomPrefix() + "}"
		keys := []string{p + ":seq", p + ":events", p + ":wake"}
		args := []any{sh.perCall}
		for j := range sh.perCall {
			id := strconv.Itoa(j)
			keys = append(keys, p+":q:"+id, p+":r:"+id, p+":out")
			args = append(args, partArgs(closeArgs)...)
		}
		if err := goredis.NewScript(sh.scriptText).Run(t.Context(), c, keys, args...).Err(); err != nil {
			t.Fatalf("%s: %v", sh.name, err)
		}
		for j := range sh.perCall {
			q := c.HGetAll(t.Context(), p+":q:"+strconv.Itoa(j)).Val()
			res := q["res"]
			if !sh.resInHash {
				res = c.Get(t.Context(), p+":r:"+strconv.Itoa(j)).Val()
			}
			if q["ver"] != "1" || !strings.HasPrefix(res, "rrr") {
				t.Errorf("%s: close %d left %v, resolution %q", sh.name, j, q, res)
			}
		}
		if n := c.XLen(t.Context(), p+":events").Val(); n != int64(sh.perCall) {
			t.Errorf("%s: %d events, want %d", sh.name, n, sh.perCall)
		}
		if n := c.XLen(t.Context(), p+":out").Val(); n != int64(sh.perCall) {
			t.Errorf("%s: %d card updates, want %d", sh.name, n, sh.perCall)
		}
	}
}
