package redis

import (
	"encoding/json"
	"strings"

	"github.com/askbridge/askbridge/core"
)

// An event is stored in its shard's stream as a field, e (beside its
// audit chain's, chain.go): packed
// (pack.go) as kind, question id, run id, time, actor, surface, reason
// and payload (compact JSON, last, so it may hold anything). An event
// that does not pack is JSON, as earlier versions stored every event; a
// packed one never starts with a brace. Seq is not stored: it is the
// stream id's.

// eventParts is how many parts a packed event has.
const eventParts = 8

// packEvent renders an event as its stream entry keeps it; an event
// without a kind is "" (none). The store assigns Seq, so the one given
// is dropped, and the chain, which the script computes.
func packEvent(e core.Event) (string, error) {
	if e.Kind == "" {
		return "", nil
	}
	at, err := packTime(e.At)
	if err != nil {
		return "", err
	}
	var payload []byte
	if len(e.Payload) > 0 {
		// What reading it back from JSON would give: compact, HTML
		// escaped, and an error if it is not JSON.
		if payload, err = json.Marshal(e.Payload); err != nil {
			return "", err
		}
	}
	v, ok := pack(string(e.Kind), string(e.QuestionID), string(e.RunID), at, e.Actor, string(e.Surface), e.Reason, string(payload))
	if ok && !strings.HasPrefix(v, "{") {
		return v, nil
	}
	stored := e // only this path lets it escape
	stored.Chain = nil
	b, err := json.Marshal(storedEvent{Event: &stored})
	return string(b), err
}

// storedEvent is an event stored as JSON: its zero Seq shadows the
// event's (encoding/json prefers the shallower field) and is left out.
type storedEvent struct {
	*core.Event
	Seq int64 `json:"seq,omitempty"`
}

// readEvent reads a stored event (Seq is the caller's to set).
func readEvent(v string) (core.Event, error) {
	if strings.HasPrefix(v, "{") {
		var j core.Event
		err := json.Unmarshal([]byte(v), &j)
		return j, err
	}
	var e core.Event
	p, err := unpack(v, eventParts)
	if err != nil {
		return e, err
	}
	if e.At, err = unpackTime(p[3]); err != nil {
		return e, err
	}
	e.Kind, e.QuestionID, e.RunID = core.EventKind(p[0]), core.QuestionID(p[1]), core.RunID(p[2])
	e.Actor, e.Surface, e.Reason = p[4], core.Surface(p[5]), p[6]
	if p[7] != "" {
		e.Payload = json.RawMessage(p[7])
	}
	return e, nil
}
