package redis

import (
	"strconv"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
)

// The audit chain (core/audit) on Redis: one stream per shard, each
// event's position its n. Go computes each event's keyed digest here, as
// it renders the event, witnessing the newest head of the shard's stream
// this Store has seen; the script that appends the event links it to
// the stream's newest entry (common.lua, append_event), in the same
// atomic step. The key never goes to Redis.

// heads is the newest chain head this Store has seen per shard, learnt
// from the replies of the scripts that appended events.
type heads struct {
	mu  sync.Mutex
	per map[int]audit.Witness
}

// see notes a head as a script replied it: "<shard> <n> <hash>".
func (h *heads) see(v string) {
	f := strings.Fields(v)
	if len(f) != 3 {
		return
	}
	shard, err1 := strconv.Atoi(f[0])
	n, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.per == nil {
		h.per = make(map[int]audit.Witness)
	}
	if n > h.per[shard].N {
		h.per[shard] = audit.Witness{N: n, Hash: f[2]}
	}
}

func (h *heads) of(shard int) audit.Witness {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.per[shard]
}

// renderedEvent is an event as a script appends it (common.lua,
// append_event): its keyed digest, the head it witnesses ("-" for none)
// and packEvent's form, three arguments in that order (args). Sent apart,
// they cost the script nothing to take apart. The zero value is no event:
// its body is "".
type renderedEvent struct {
	digest, witness, body string
}

// complete reports whether e is an event a script can append: a body,
// its keyed digest (hex SHA-256) and a witness, as common.lua's
// check_event wants them.
func (e renderedEvent) complete() bool {
	return e.body != "" && len(e.digest) == 64 && e.witness != ""
}

// args appends e's three script arguments to cmd.
func (e renderedEvent) args(cmd []any) []any {
	return append(cmd, e.digest, e.witness, e.body)
}

// renderEvent renders an event for a script to append to shard's
// stream, witnessing the newest head of it this Store has seen. An event
// without a kind renders as none.
func (s *Store) renderEvent(e core.Event, shard int) (renderedEvent, error) {
	body, err := packEvent(e)
	if err != nil || body == "" {
		return renderedEvent{}, err
	}
	w := s.heads.of(shard)
	d, err := s.audit.Digest(e, shard, w)
	if err != nil {
		return renderedEvent{}, err
	}
	ws := w.String()
	if ws == "" {
		ws = "-"
	}
	return renderedEvent{digest: d, witness: ws, body: body}, nil
}

// chainOf reads an event entry's chain (nil for one written before the
// chain began): its c field, "<prev or -> <witness or -> <digest>
// <hash>" (common.lua, append_event), and x, a checkpoint's runs.
func chainOf(m goredis.XMessage, shard int, n int64) *core.Chain {
	c, _ := m.Values["c"].(string)
	f := strings.Fields(c)
	if len(f) != 4 {
		return nil
	}
	for i := range 2 {
		if f[i] == "-" {
			f[i] = ""
		}
	}
	x, _ := m.Values["x"].(string)
	return &core.Chain{Stream: shard, N: n, Prev: f[0], Witness: f[1], Digest: f[2], Hash: f[3], Purged: x}
}
