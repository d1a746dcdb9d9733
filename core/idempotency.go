package core

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Idempotency makes an ask safe to repeat. An agent whose ask got no
// answer (a dropped connection, a 5xx, a crash of the replica it spoke to)
// cannot know whether the question was parked; it asks again, and must get
// the question it already has rather than a second one that people would
// be asked to answer with nobody waiting on it.
//
// An ask is scoped by its agent and either its run and tool call id (a
// batch's: the ids of its calls) or, without one, the caller's
// Idempotency-Key (which an ask naming its tool calls may carry too, to
// no effect). Key is the SHA-256 of that scope:
// the store keeps one question per Key, checked in the same atomic step
// that creates the question (law 1), so racing repeats on any replica park
// once. Fingerprint is the SHA-256 of the ask itself, so a repeat that
// differs from the first is told so instead of being answered with a
// question about something else.
type Idempotency struct {
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
}

// MaxIdempotencyKeyLen caps a caller's Idempotency-Key.
const MaxIdempotencyKeyLen = 255

// DuplicateError is what Store.Create returns when a question with the
// same idempotency key is already stored; it carries that question, and
// nothing was changed.
type DuplicateError struct {
	Question *Question
}

// ErrDuplicate matches a *DuplicateError with errors.Is; its code is
// CodeConflict.
var ErrDuplicate = errors.New("already asked with this idempotency key")

// Is makes errors.Is(err, ErrDuplicate) hold.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("question %s was already asked with this idempotency key", e.Question.ID)
}

// idempotencyOf is in's scope and fingerprint, or nil for an ask that has
// neither an Idempotency-Key nor a tool call id (nor calls) (nothing says two such
// asks are the same, so each parks). An ask that names its tool call is
// that call's one question whatever key it carries: a library that keys
// every request, or a retry after a restart with a fresh key, would
// otherwise park the same call twice.
//
// The fingerprint is of the ask as it means, not as it is spelled:
// arguments are compared as JSON values, a batch's calls by their ids
// whatever their order, and editable keys as a set. A client that
// rebuilds its JSON from a map on each retry sends the same ask; told
// "a different body" and "use a new tool_call_id", it would have parked
// the same calls twice. sent is the fingerprint of the ask as spelled
// (its calls and editable keys in the order sent), which a question
// stored before the order stopped counting keeps as its own (repeatOf).
func idempotencyOf(in AskInput) (idem *Idempotency, sent string, err error) {
	scope, _, _ := idempotencyScope(in)
	if scope == "" {
		return nil, "", nil
	}
	body := in
	body.IdempotencyKey = ""
	if body.HostPrompt {
		body.Timeout = 0 // the hook's wait, not the asker's word (AskInput.HostPrompt)
	}
	if len(body.Arguments) > 0 {
		canon, err := CanonicalArguments(body.Arguments)
		if err != nil {
			return nil, "", err
		}
		body.Arguments = canon
	}
	if len(body.Calls) > 0 {
		body.Calls = slices.Clone(body.Calls)
		for i := range body.Calls {
			if len(body.Calls[i].Arguments) == 0 {
				continue
			}
			canon, err := CanonicalArguments(body.Calls[i].Arguments)
			if err != nil {
				return nil, "", err
			}
			body.Calls[i].Arguments = canon
		}
	}
	spelled := body
	changed := normalize(&body)
	f, err := fingerprint(body)
	if err != nil {
		return nil, "", err
	}
	// The ask as spelled is marshalled again only when it differs from
	// the ask as it means: most asks are spelled in order already, and
	// the fingerprint is a JSON encoding of the whole ask.
	sent = f
	if changed {
		if sent, err = fingerprint(spelled); err != nil {
			return nil, "", err
		}
	}
	k := sha256.Sum256([]byte(scope))
	return &Idempotency{Key: hex.EncodeToString(k[:]), Fingerprint: f}, sent, nil
}

// normalize puts body's sets in order (its editable keys, a batch's
// calls by id: editableSet) on a copy of its calls, and reports whether
// that changed anything.
func normalize(body *AskInput) (changed bool) {
	set := func(e **Editable) {
		n := editableSet(*e)
		if !sameEditable(n, *e) {
			changed = true
		}
		*e = n
	}
	set(&body.Editable)
	if len(body.Calls) == 0 {
		return changed
	}
	body.Calls = slices.Clone(body.Calls)
	for i := range body.Calls {
		set(&body.Calls[i].Editable)
	}
	byID := func(a, b CallInput) int { return strings.Compare(a.ToolCallID, b.ToolCallID) }
	if !slices.IsSortedFunc(body.Calls, byID) {
		changed = true
		slices.SortFunc(body.Calls, byID)
	}
	return changed
}

// sameEditable reports whether a and b encode alike.
func sameEditable(a, b *Editable) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.All == b.All && slices.Equal(a.Keys, b.Keys)
}

// fingerprint is the SHA-256 of body, in hex.
func fingerprint(body AskInput) (string, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return "", Internal("ask", err)
	}
	f := sha256.Sum256(b)
	return hex.EncodeToString(f[:]), nil
}

// editableSet is e as a fingerprint reads it: nothing editable is no
// list, and the keys in order, since they name a set.
func editableSet(e *Editable) *Editable {
	if !e.Any() {
		return nil
	}
	c := Editable{All: e.All, Keys: slices.Sorted(slices.Values(e.Keys))}
	return &c
}

// shard is where a question with this key lives: always the same shard for
// the same key, so the store can check the key in the one-shard atomic
// step that creates the question.
func (i *Idempotency) shard(shards int) int {
	b, _ := hex.DecodeString(i.Key)
	return int(binary.BigEndian.Uint32(b[:4]) % uint32(shards))
}

// repeatOf decides what a repeated ask gets: the stored question if it is
// the same ask (by its fingerprint, or as sent, for a question stored
// before the order of calls stopped counting), else a conflict that says
// what differs.
func repeatOf(in AskInput, idem *Idempotency, sent string, dup *DuplicateError) (*Question, error) {
	q := dup.Question
	if q.Idempotency != nil && (q.Idempotency.Fingerprint == idem.Fingerprint || q.Idempotency.Fingerprint == sent) {
		return q, nil
	}
	_, what, renew := idempotencyScope(in)
	return nil, Errorf(CodeConflict, "ask",
		"question %s was already asked with this %s, with a different body; use a new %s to ask something else", q.ID, what, renew)
}

// idempotencyScope is what makes in the same ask as another, how a
// refusal names it, and what a different ask must change (renew): its
// tool call, or a batch's calls, which win over any key, or else its
// Idempotency-Key; "" for none.
func idempotencyScope(in AskInput) (scope, what, renew string) {
	switch {
	case in.ToolCallID != "":
		return "call\x1f" + string(in.Agent) + "\x1f" + string(in.RunID) + "\x1f" + in.ToolCallID,
			"tool call id " + in.ToolCallID + " in run " + string(in.RunID), "tool_call_id"
	case len(in.Calls) > 0:
		// A batch names its calls: resent with the same calls, it is the
		// same ask, whatever key it carries, as a single call is.
		ids := make([]string, len(in.Calls))
		for i, c := range in.Calls {
			ids[i] = c.ToolCallID
		}
		slices.Sort(ids)
		return "calls\x1f" + string(in.Agent) + "\x1f" + string(in.RunID) + "\x1f" + strings.Join(ids, "\x1f"),
			"batch of tool call ids " + strings.Join(ids, ", ") + " in run " + string(in.RunID), "tool_call_id"
	case in.IdempotencyKey != "":
		return "key\x1f" + string(in.Agent) + "\x1f" + in.IdempotencyKey, "Idempotency-Key", "key"
	}
	return "", "", ""
}
