package core

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Downtime is a span in which askbridge was not running: from the last
// heartbeat before it to the boot after it. A deadline that passed in it
// passed when no answer could be taken, and a timeout says so (laws 8
// and 12, honest recovery and the truth about the closer: "nobody
// answered" alone would blame the people).
type Downtime struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
}

// Covers reports whether t fell in the downtime (after its last beat, up
// to the boot). A nil Downtime covers nothing.
func (d *Downtime) Covers(t time.Time) bool {
	return d != nil && t.After(d.Since) && !t.After(d.Until)
}

// AwayNote is what a timeout's reason and its card add when its deadline
// passed in d; "" for none.
func AwayNote(d *Downtime) string {
	if d == nil {
		return ""
	}
	return fmt.Sprintf("; it passed while askbridge was not running (for %s), when no answer could be taken",
		d.Until.Sub(d.Since).Round(time.Second))
}

// lastAwayKey is the Values key under which Boot keeps the last downtime
// it found (an awayRecord without a cursor), for the ticker: the catch-up
// record under awayKey is cleared once its re-notices are stored, which
// may come before the tick that times out what passed its deadline then.
// Every replica's ticker reads it, so whichever times a question out
// words it the same.
const lastAwayKey = "core:away:last"

// lastDowntime is the last downtime Boot recorded, nil if none (or if it
// cannot be read now: the timeout then reads as any other, which is the
// lesser fault than not timing out).
func (s *Service) lastDowntime(ctx context.Context) *Downtime {
	raw, err := s.store.Value(ctx, lastAwayKey)
	if err != nil || raw == "" {
		return nil
	}
	var rec awayRecord
	if json.Unmarshal([]byte(raw), &rec) != nil {
		return nil
	}
	return &Downtime{Since: rec.Since, Until: rec.Booted}
}
