package audit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Checkpoint is the event a purge records before it drops chained
// events: when, the retention cutoff it purged by, and the runs it drops
// (the same the store puts in its Chain's Purged). The runs are in the
// payload so that the keyed digest covers them: in Purged alone, only
// the unkeyed link did, and someone who can write the store but has not
// the key could have forged runs that bridge events they deleted.
func Checkpoint(cutoff, now time.Time, purged string) core.Event {
	payload, _ := json.Marshal(checkpointPayload{Cutoff: cutoff.UTC(), Purged: purged}) // plain data always encodes
	return core.Event{At: now.UTC(), Kind: core.EventCheckpoint, Reason: "retention", Payload: payload}
}

// checkpointPayload is a checkpoint event's payload. Checkpoints written
// before the runs were keyed have no purged.
type checkpointPayload struct {
	Cutoff time.Time `json:"cutoff"`
	Purged string    `json:"purged,omitempty"`
}

// keyedRuns is the runs checkpoint e was written with, under the key, and
// whether it has them (a checkpoint of an earlier version has not).
func keyedRuns(e core.Event) (string, bool) {
	var p checkpointPayload
	if json.Unmarshal(e.Payload, &p) != nil || p.Purged == "" {
		return "", false
	}
	return p.Purged, true
}

// Run is a stretch of a stream's chain that a purge dropped: the events
// at positions From..To followed one another in the chain; Prev is the
// hash the first linked to and Last the hash of the last.
type Run struct {
	From, To   int64
	Prev, Last string
}

// Runs groups dropped stretches (single events, or runs a dropped
// checkpoint carried) into as few runs as the chain allows: sorted by
// position, a stretch joins the run before it when it links to that
// run's last hash. store/redis/lua/purge.lua groups the same way.
func Runs(parts []Run) []Run {
	slices.SortFunc(parts, func(a, b Run) int { return cmp.Compare(a.From, b.From) })
	var out []Run
	for _, p := range parts {
		if n := len(out); n > 0 && out[n-1].Last == p.Prev && out[n-1].To < p.From {
			out[n-1].To, out[n-1].Last = p.To, p.Last
			continue
		}
		out = append(out, p)
	}
	return out
}

// EncodeRuns is runs as a checkpoint's Chain.Purged keeps them:
// "from:to:prev:last", space-separated.
func EncodeRuns(runs []Run) string {
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = strconv.FormatInt(r.From, 10) + ":" + strconv.FormatInt(r.To, 10) + ":" + r.Prev + ":" + r.Last
	}
	return strings.Join(parts, " ")
}

// ParseRuns reads EncodeRuns' form.
func ParseRuns(s string) ([]Run, error) {
	var out []Run
	for _, f := range strings.Fields(s) {
		p := strings.Split(f, ":")
		if len(p) != 4 {
			return nil, fmt.Errorf("purged run %q is not from:to:prev:last", f)
		}
		from, err1 := strconv.ParseInt(p[0], 10, 64)
		to, err2 := strconv.ParseInt(p[1], 10, 64)
		if err1 != nil || err2 != nil || from <= 0 || to < from || (p[2] != "" && !isHex(p[2])) || !isHex(p[3]) {
			return nil, fmt.Errorf("purged run %q is not from:to:prev:last", f)
		}
		out = append(out, Run{From: from, To: to, Prev: p[2], Last: p[3]})
	}
	return out, nil
}
