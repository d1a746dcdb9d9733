package core

import (
	"strings"
)

// Ref is what a chat button carries: an opaque, versioned reference to one
// choice on one question, and nothing else (law 5). It is never a command
// to re-parse; a click resolves it against the stored question, so a click
// after a restart, or on another replica, works.
type Ref struct {
	QuestionID QuestionID
	// Item is the form item's index (a batch call's, on a batch), or -1
	// when the ref is not about one part.
	Item int
	// Action is what the button does.
	Action RefAction
	// Option is the option's index for RefOption.
	Option int
}

// RefAction is a button's verb.
type RefAction byte

const (
	RefOption  RefAction = 'o' // choose option Option (of item Item on a form)
	RefApprove RefAction = 'a' // approve an approval
	RefDeny    RefAction = 'd' // deny an approval
	RefDecline RefAction = 'x' // decline the question
	RefText    RefAction = 't' // open a free-text prompt (for item Item on a form)
	RefEdit    RefAction = 'e' // edit an approval's arguments, then approve
	// RefStanding approves and grants a standing approval: Option 0 for
	// the rest of the run, 1 for the agent for the offered hours.
	RefStanding RefAction = 's'
)

// refVersion is the first character of every encoded ref. A new layout
// takes a new version; old buttons in old messages keep decoding.
const refVersion = '1'

// RefLen is the length of every encoded ref: version, action, item, option
// and the question id. 21 bytes fit Telegram's 64-byte callback_data,
// Discord's 100-character custom_id and Slack's 255-character action_id.
const RefLen = 4 + IDLen

// digits encode an item or option index; '-' is "none".
const digits = "0123456789abcdefghijklmnopqrstuv"

// Encode returns the ref's wire form, or "" if the ref cannot be encoded
// (bad id, index out of range, unknown action): a renderer must refuse to
// draw such a button.
func (r Ref) Encode() string {
	if !ValidID(r.QuestionID) || r.Item < -1 || r.Item >= len(digits) || r.Option < 0 || r.Option >= len(digits) {
		return ""
	}
	switch r.Action {
	case RefOption, RefApprove, RefDeny, RefDecline, RefText, RefEdit, RefStanding:
	default:
		return ""
	}
	item := byte('-')
	if r.Item >= 0 {
		item = digits[r.Item]
	}
	return string([]byte{refVersion, byte(r.Action), item, digits[r.Option]}) + string(r.QuestionID)
}

// DecodeRef parses a ref from a button. Anything that is not exactly a ref
// this version wrote is refused with ErrNotFound, the same as an unknown
// question, so a forged value learns nothing.
func DecodeRef(s string) (Ref, error) {
	if len(s) != RefLen || s[0] != refVersion {
		return Ref{}, ErrNotFound
	}
	r := Ref{Action: RefAction(s[1]), QuestionID: QuestionID(s[4:]), Item: -1}
	switch r.Action {
	case RefOption, RefApprove, RefDeny, RefDecline, RefText, RefEdit, RefStanding:
	default:
		return Ref{}, ErrNotFound
	}
	if s[2] != '-' {
		if r.Item = strings.IndexByte(digits, s[2]); r.Item < 0 {
			return Ref{}, ErrNotFound
		}
	}
	if r.Option = strings.IndexByte(digits, s[3]); r.Option < 0 || !ValidID(r.QuestionID) {
		return Ref{}, ErrNotFound
	}
	if r.Encode() != s {
		return Ref{}, ErrNotFound // one canonical form per ref
	}
	return r, nil
}

// AnswerFor turns a clicked ref into the answer it stands for on q, with
// the free text (a reason, a form item's own answer) the platform
// collected. It checks the ref against the question: an option index that
// does not exist is invalid.
func AnswerFor(q *Question, r Ref, d Decider, text string) (AnswerInput, error) {
	const op = "button"
	in := AnswerInput{QuestionID: q.ID, Decider: d, read: q}
	if r.QuestionID != q.ID {
		return in, Errorf(CodeInvalid, op, "the button is not for this question")
	}
	k, ok := kindOf(q)
	if !ok || k.button == nil {
		return in, Errorf(CodeInvalid, op, "the button does not fit this question")
	}
	return k.button(q, r, in, text)
}

var (
	errNotFitting = Errorf(CodeInvalid, "button", "the button does not fit this question")
	errNoOption   = Errorf(CodeInvalid, "button", "the option does not exist")
)
