package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/askbridge/askbridge/fence"
)

// MaxEditableKeys caps the list of editable argument keys an ask names.
const MaxEditableKeys = 50

// Editable says which of an approval's arguments an approver may change
// before approving: all of them, or a list of top-level keys. It reads
// and writes JSON as true (all) or a list of keys.
type Editable struct {
	All  bool
	Keys []string
}

// MarshalJSON writes true for all, else the list of keys.
func (e Editable) MarshalJSON() ([]byte, error) {
	if e.All {
		return []byte("true"), nil
	}
	return json.Marshal(e.Keys)
}

// UnmarshalJSON takes true, false (nothing editable) or a list of keys.
func (e *Editable) UnmarshalJSON(b []byte) error {
	var all bool
	if err := json.Unmarshal(b, &all); err == nil {
		*e = Editable{All: all}
		return nil
	}
	var keys []string
	if err := json.Unmarshal(b, &keys); err != nil {
		return Errorf(CodeInvalid, "editable", "editable is true or a list of top-level argument keys")
	}
	*e = Editable{Keys: keys}
	return nil
}

// Any reports whether anything at all may be edited.
func (e *Editable) Any() bool { return e != nil && (e.All || len(e.Keys) > 0) }

// Allows reports whether top-level key may change.
func (e *Editable) Allows(key string) bool {
	return e != nil && (e.All || slices.Contains(e.Keys, key))
}

// validate checks an ask's editable keys against its arguments, which
// must then be a JSON object: only an object has top-level keys.
func (e *Editable) validate(args json.RawMessage) error {
	const op = "ask"
	if !e.Any() {
		return nil
	}
	if _, err := objectOf(args); err != nil {
		return Errorf(CodeInvalid, op, "editable arguments must be a JSON object")
	}
	if len(e.Keys) > MaxEditableKeys {
		return Errorf(CodeInvalid, op, "editable names %d keys; the limit is %d", len(e.Keys), MaxEditableKeys)
	}
	seen := map[string]bool{}
	for i, k := range e.Keys {
		if err := checkID(op, fmt.Sprintf("editable[%d]", i), k, true); err != nil {
			return err
		}
		if seen[k] {
			return Errorf(CodeInvalid, op, "editable[%d] %q is named twice", i, k)
		}
		seen[k] = true
	}
	return nil
}

// ArgumentEdit is what an approver changed before approving: the
// arguments as approved (canonical), the hashes of both versions, and
// which top-level keys changed. The resolution records it; the agent
// must make the call with Arguments alone.
type ArgumentEdit struct {
	Arguments            json.RawMessage `json:"arguments,omitempty"`
	ArgumentsSHA256      string          `json:"arguments_sha256"`
	AskedArgumentsSHA256 string          `json:"asked_arguments_sha256"`
	Changes              []KeyChange     `json:"changes"`
}

// KeyChange is one top-level key an edit touched.
type KeyChange struct {
	Key    string     `json:"key"`
	Change ChangeKind `json:"change"`
}

// ChangeKind is how an edit touched a key.
type ChangeKind string

const (
	KeyAdded   ChangeKind = "added"
	KeyRemoved ChangeKind = "removed"
	KeyChanged ChangeKind = "changed"
)

// editTextLen is how long the text of edited arguments may be and still
// be read as it is: arguments at the limit, indented as a card shows
// them, mostly fit. Longer text is read without its layout first
// (editOf), since many short values indent to more.
const editTextLen = 4 * MaxArgumentsLen

// editOf checks edited arguments against the call: a JSON object within
// MaxArgumentsLen whose changed keys are all editable. It returns nil when
// the edit changes nothing (a plain approval). The refusal of a key that
// may not change names the key.
func editOf(call *ToolCall, raw json.RawMessage) (*ArgumentEdit, error) {
	const op = "edit"
	if call == nil || !call.Editable.Any() {
		return nil, Errorf(CodeInvalid, op, "this tool call's arguments are not editable")
	}
	// The limit counts the arguments, not the indentation a card's edit
	// box fills them in with (PrettyJSON), which for many short values
	// can be several times their size: text past a loose bound is read
	// without its layout first, and the arguments are bounded exactly
	// after.
	if len(raw) > editTextLen {
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil || c.Len() > MaxArgumentsLen {
			n := len(raw)
			if err == nil {
				n = c.Len()
			}
			return nil, Errorf(CodeInvalid, op, "the edited arguments are %d bytes; the limit is %d", n, MaxArgumentsLen)
		}
		raw = c.Bytes()
	}
	// Refused as an ask's arguments are, saying why: a person typing in
	// chat or the console is not left guessing at a lone surrogate or a
	// stray bracket.
	sum, canon, err := HashArguments(raw)
	if err != nil {
		return nil, Errorf(CodeInvalid, op, "the edited %s", ErrorMessage(err))
	}
	if len(canon) > MaxArgumentsLen {
		return nil, Errorf(CodeInvalid, op, "the edited arguments are %d bytes; the limit is %d", len(canon), MaxArgumentsLen)
	}
	if err := checkObject(op, "the edited arguments", canon); err != nil {
		return nil, err
	}
	after, err := objectOf(canon)
	if err != nil {
		return nil, Errorf(CodeInvalid, op, "the edited arguments must be a JSON object")
	}
	before, err := objectOf(call.Arguments)
	if err != nil {
		return nil, Errorf(CodeInvalid, op, "the asked arguments are not a JSON object, so they cannot be edited")
	}
	changes := diffKeys(before, after)
	for _, c := range changes {
		if !call.Editable.Allows(c.Key) {
			return nil, Errorf(CodeInvalid, op, "argument %q may not be changed: it is not one of the editable keys", c.Key)
		}
	}
	if len(changes) == 0 {
		return nil, nil
	}
	return &ArgumentEdit{Arguments: canon, ArgumentsSHA256: sum, AskedArgumentsSHA256: call.ArgumentsSHA256, Changes: changes}, nil
}

// objectOf decodes a JSON object into its top-level members, each in
// canonical form so that equal values compare equal.
func objectOf(raw json.RawMessage) (map[string]string, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, Errorf(CodeInvalid, "arguments", "not a JSON object")
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		c, err := CanonicalArguments(v)
		if err != nil {
			return nil, err
		}
		out[k] = string(c)
	}
	return out, nil
}

// diffKeys lists the top-level keys that differ, sorted by key.
func diffKeys(before, after map[string]string) []KeyChange {
	var out []KeyChange
	for k, v := range before {
		switch w, ok := after[k]; {
		case !ok:
			out = append(out, KeyChange{Key: k, Change: KeyRemoved})
		case w != v:
			out = append(out, KeyChange{Key: k, Change: KeyChanged})
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			out = append(out, KeyChange{Key: k, Change: KeyAdded})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// ChangesLine is an edit's short diff of keys for people: "path changed,
// mode added".
func ChangesLine(e *ArgumentEdit) string {
	if e == nil {
		return ""
	}
	var b bytes.Buffer
	for i, c := range e.Changes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Key + " " + string(c.Change))
	}
	return b.String()
}

// approvalResume adds what an approval's resume says beyond its verdict
// and the hash it covers (Resolution.VerdictSHA256): the edited
// arguments, which alone may be used, with the asked ones' hash, and the
// standing approval that closed it (its grantor is named by deciderName).
func approvalResume(in *fence.ResumeInput, r *Resolution) {
	if e := r.Edit; e != nil {
		in.Structured.Edited = true
		in.Structured.ApprovedArguments = e.Arguments
		in.Structured.AskedArgumentsSHA256 = e.AskedArgumentsSHA256
	}
	if st := r.Standing; st != nil {
		in.Structured.Standing = &fence.StandingNote{ID: st.ID, GrantedAt: st.GrantedAt.UTC().Format(time.RFC3339)}
	}
}

// Refusal is what the chokepoint would tell d about answering q now, and
// records it as the chokepoint would; nil when d may answer. It is for
// doors that first open a form (a modal, a prompt) and take the answer
// later: someone who may not answer learns so before typing, and the
// answer, when it comes, is checked again.
func (s *Service) Refusal(ctx context.Context, q *Question, d Decider) error {
	who := s.identify(d)
	if !s.allowed(q, who) {
		return s.forbid(ctx, q, who, "answer")
	}
	if !q.Open() {
		return s.lost(ctx, attempt{op: "answer", id: q.ID, door: doorHuman, actor: who.Decider}, q)
	}
	return nil
}
