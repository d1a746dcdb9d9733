package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// AskInput is what an agent sends to park a question. Validate checks it
// whole before anything is stored.
type AskInput struct {
	Kind          Kind
	Agent         AgentID
	RunID         RunID
	ToolCallID    string
	Labels        Labels
	Text          string
	Context       string
	Reversibility Reversibility
	Route         string // "" is the default route
	Options       []Option
	Items         []FormItem
	Tool          string
	Arguments     json.RawMessage
	// Editable lets an approver change these arguments (all, or some
	// top-level keys) before approving. Like Calls and Quorum, it is left
	// out of the idempotency fingerprint when unset.
	Editable *Editable `json:",omitempty"`
	// Calls makes the approval a batch of 2 to 20 tool calls, each with
	// its own id, tool and arguments, instead of Tool and Arguments.
	Calls     []CallInput   `json:",omitempty"`
	Timeout   time.Duration // 0 takes the configured default
	OnTimeout TimeoutPolicy // "" is deny
	MaxReasks int           // reask: how many times, 1 if unset
	// Quorum asks for this many different people to agree, within what
	// the route allows; 0 takes the route's. Left out of the idempotency
	// fingerprint when 0, so asks fingerprinted before it existed still
	// match their repeats.
	Quorum int `json:",omitempty"`
	// IdempotencyKey is the caller's own key for asks that have no tool
	// call id: repeats with the same key (by the same agent) get the first
	// question back. See Idempotency.
	IdempotencyKey string
	// CallbackURL is told when the question closes; it must be under a
	// prefix of Config.Callbacks. Left out of the idempotency fingerprint
	// when unset.
	CallbackURL string `json:",omitempty"`
	// HostPrompt marks an agent host's own permission prompt, asked
	// through the hooks door (adapters/hooks): set by that door alone,
	// never taken from an asker.
	//
	// Its Timeout is the hook's wait, which the host chose, not the
	// asker's word: the door withdraws the question when the wait ends,
	// and the host falls back to its own prompt. So the operator's
	// limits shorten it rather than refuse or lengthen it (a longer
	// rule's timeout leaves it as it is, Rule.shape; over MaxTimeout it
	// is cut to the max, newQuestion), and it is left out of the
	// idempotency fingerprint (idempotencyOf): the same prompt asked
	// again through a hook that waits otherwise, or after a reload moved
	// the wait, is the same question, not a conflict.
	HostPrompt bool `json:",omitempty"`
}

// Validate reports the first rule the input breaks, as a CodeInvalid error
// whose message names the field.
func (in AskInput) Validate() error {
	const op = "ask"
	if _, err := ParseKind(string(in.Kind)); err != nil {
		return Errorf(CodeInvalid, op, "kind %q is not one of clarification, decision, approval, form", in.Kind)
	}
	if _, err := ParseReversibility(string(in.Reversibility)); err != nil {
		return Errorf(CodeInvalid, op, "%s", ErrorMessage(err))
	}
	for _, f := range []struct {
		name, v  string
		required bool
	}{
		{"agent", string(in.Agent), true}, {"run_id", string(in.RunID), true}, {"tool_call_id", in.ToolCallID, false},
		{"labels.project", in.Labels.Project, false}, {"labels.task", in.Labels.Task, false}, {"route", in.Route, false},
	} {
		if err := checkID(op, f.name, f.v, f.required); err != nil {
			return err
		}
	}
	if err := checkText(op, "Idempotency-Key", in.IdempotencyKey, MaxIdempotencyKeyLen, false); err != nil {
		return err
	}
	if blank(in.Text) {
		return Errorf(CodeInvalid, op, "question must not be blank")
	}
	if err := checkText(op, "question", in.Text, MaxTextLen, true); err != nil {
		return err
	}
	if err := checkText(op, "context", in.Context, MaxContextLen, true); err != nil {
		return err
	}
	if in.Timeout < 0 {
		return Errorf(CodeInvalid, op, "timeout must not be negative")
	}
	if _, err := ParseTimeoutPolicy(string(in.OnTimeout)); err != nil {
		return Errorf(CodeInvalid, op, "%s", ErrorMessage(err))
	}
	if in.MaxReasks < 0 || in.MaxReasks > MaxReasks {
		return Errorf(CodeInvalid, op, "max_reasks must be between 0 and %d", MaxReasks)
	}
	if in.MaxReasks > 0 && in.OnTimeout != OnTimeoutReask {
		return Errorf(CodeInvalid, op, "max_reasks applies only to on_timeout reask")
	}

	if in.Editable.Any() && in.Kind != KindApproval {
		return Errorf(CodeInvalid, op, "only an approval's arguments can be editable")
	}
	// Each kind takes its own fields and refuses the others', so a client
	// that mixes them up hears about it instead of having fields ignored.
	// Its home in kind.go's homes holds the check.
	k, ok := homes[in.shape()]
	if !ok || k.ask == nil {
		return Errorf(CodeInvalid, op, "kind %q has no ask check", in.Kind) // a kind added to enums.go but not to homes
	}
	return k.ask(in)
}

func (in AskInput) hasOptions() bool { return len(in.Options) > 0 }
func (in AskInput) hasItems() bool   { return len(in.Items) > 0 }
func (in AskInput) hasTool() bool {
	return in.Tool != "" || len(in.Arguments) > 0 || len(in.Calls) > 0
}

func validateOptions(opts []Option) error {
	const op = "ask"
	if len(opts) < 2 {
		return Errorf(CodeInvalid, op, "a decision needs at least 2 options, got %d", len(opts))
	}
	if len(opts) > MaxOptions {
		return Errorf(CodeInvalid, op, "a decision takes at most %d options, got %d", MaxOptions, len(opts))
	}
	seen := map[string]bool{}
	recommended := 0
	for i, o := range opts {
		field := fmt.Sprintf("options[%d]", i)
		if err := checkID(op, field+".id", o.ID, true); err != nil {
			return err
		}
		if seen[o.ID] {
			return Errorf(CodeInvalid, op, "%s.id %q is used twice", field, o.ID)
		}
		seen[o.ID] = true
		if blank(o.Title) {
			return Errorf(CodeInvalid, op, "%s.title is required", field)
		}
		if err := checkText(op, field+".title", o.Title, MaxTitleLen, false); err != nil {
			return err
		}
		if blank(o.Writeup) {
			return Errorf(CodeInvalid, op, "%s.writeup is required: say what choosing it trades off", field)
		}
		if err := checkText(op, field+".writeup", o.Writeup, MaxWriteupLen, true); err != nil {
			return err
		}
		if o.Recommended {
			recommended++
		}
	}
	if recommended != 1 {
		return Errorf(CodeInvalid, op, "a decision needs exactly one recommended option, got %d", recommended)
	}
	return nil
}

func validateItems(items []FormItem) error {
	const op = "ask"
	if len(items) < 1 || len(items) > MaxItems {
		return Errorf(CodeInvalid, op, "a form takes 1 to %d items, got %d", MaxItems, len(items))
	}
	seen := map[string]bool{}
	for i, it := range items {
		field := fmt.Sprintf("items[%d]", i)
		if err := checkID(op, field+".id", it.ID, true); err != nil {
			return err
		}
		if seen[it.ID] {
			return Errorf(CodeInvalid, op, "%s.id %q is used twice", field, it.ID)
		}
		seen[it.ID] = true
		if blank(it.Question) {
			return Errorf(CodeInvalid, op, "%s.question is required", field)
		}
		if err := checkText(op, field+".question", it.Question, MaxTextLen, true); err != nil {
			return err
		}
		if len(it.Options) < MinItemOptions || len(it.Options) > MaxItemOptions {
			return Errorf(CodeInvalid, op, "%s takes %d to %d options, got %d", field, MinItemOptions, MaxItemOptions, len(it.Options))
		}
		optSeen := map[string]bool{}
		recommended := 0
		for j, o := range it.Options {
			of := fmt.Sprintf("%s.options[%d]", field, j)
			if err := checkID(op, of+".id", o.ID, true); err != nil {
				return err
			}
			if optSeen[o.ID] {
				return Errorf(CodeInvalid, op, "%s.id %q is used twice", of, o.ID)
			}
			optSeen[o.ID] = true
			if blank(o.Label) {
				return Errorf(CodeInvalid, op, "%s.label is required", of)
			}
			if err := checkText(op, of+".label", o.Label, MaxTitleLen, false); err != nil {
				return err
			}
			if err := checkText(op, of+".description", o.Description, MaxWriteupLen, true); err != nil {
				return err
			}
			if o.Recommended {
				recommended++
			}
		}
		if recommended > 1 {
			return Errorf(CodeInvalid, op, "%s has %d recommended options; at most one", field, recommended)
		}
	}
	return nil
}

// IsTextControl reports whether r steers how text is shown rather than
// being shown: a C0 or C1 control (DEL too), or a bidi embedding,
// override or isolate (U+202A to U+202E, U+2066 to U+2069). An agent's
// ESC can erase or rewrite rows of an operator's terminal, and U+202E
// can show "gnp.exe" as "exe.png". Right-to-left text itself, and the
// marks U+200E and U+200F, need none of them.
func IsTextControl(r rune) bool {
	return unicode.Is(unicode.Cc, r) || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// checkText checks a text field an agent supplies: checkLen, and no
// control (IsTextControl) but tab and newline, and carriage return where
// the field takes several lines (a question, a write-up), as text from
// Windows comes. field names the field in the refusal.
func checkText(op, field, s string, max int, multiline bool) error {
	if err := checkLen(op, field, s, max); err != nil {
		return err
	}
	i := strings.IndexFunc(s, func(r rune) bool {
		return IsTextControl(r) && r != '\t' && r != '\n' && (r != '\r' || !multiline)
	})
	if i < 0 {
		return nil
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	if unicode.Is(unicode.Cc, r) {
		taken := "tab and line breaks"
		if !multiline {
			taken = "tab and line feed"
		}
		return Errorf(CodeInvalid, op, "%s holds the control character U+%04X: only %s are taken", field, r, taken)
	}
	return Errorf(CodeInvalid, op, "%s holds the bidi control U+%04X, which reorders how the text around it is shown", field, r)
}
