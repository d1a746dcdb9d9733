package fence

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// StandingNote says which standing approval closed a question at once,
// and when it was granted. Both are server-made: the id is the server's,
// the time is written by the server (RFC 3339).
type StandingNote struct {
	ID        string `json:"id"`
	GrantedAt string `json:"granted_at"`
}

// CallOutcome is one tool call's outcome in a batch, as data. Approved is
// nil for a call nobody decided.
type CallOutcome struct {
	ToolCallID string `json:"tool_call_id"`
	Approved   *bool  `json:"approved,omitempty"`
	// DecidedBy is who decided the call: CloserPerson, CloserStanding
	// with Standing saying which standing approval, or CloserRule (a
	// policy rule, at the ask, with RuleReason the operator's words for
	// it); "" for a call nobody decided. Decider is the untrusted display
	// name of the person who decided it or granted the standing approval.
	// They word the text (names and reasons fenced); none is part of the
	// data's JSON, whose shape agents already read.
	DecidedBy       Closer        `json:"-"`
	Decider         string        `json:"-"`
	Standing        *StandingNote `json:"-"`
	RuleReason      string        `json:"-"`
	ArgumentsSHA256 string        `json:"arguments_sha256,omitempty"`
	// Edited: the approver changed the arguments; ApprovedArguments are
	// the only ones the call may be made with, hashing to
	// ArgumentsSHA256, and AskedArgumentsSHA256 is the first ask's.
	Edited               bool            `json:"edited,omitempty"`
	ApprovedArguments    json.RawMessage `json:"approved_arguments,omitempty"`
	AskedArgumentsSHA256 string          `json:"asked_arguments_sha256,omitempty"`
}

// checkApproval refuses approval data the text could not word honestly:
// an edit without both hashes or without its arguments, a standing note
// whose server-made parts are not plain, a batch call's hashes that are
// not hex.
func checkApproval(in ResumeInput) error {
	st := in.Structured
	if st.Edited {
		if !isSHA256Hex(st.ArgumentsSHA256) || !isSHA256Hex(st.AskedArgumentsSHA256) {
			return fmt.Errorf("%w: edited arguments need both hashes", ErrInvalid)
		}
		if len(st.ApprovedArguments) == 0 {
			return fmt.Errorf("%w: edited arguments are missing", ErrInvalid)
		}
	}
	if n := st.Standing; n != nil {
		if err := checkStandingNote(*n); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	for i, c := range st.Calls {
		for _, h := range []string{c.ArgumentsSHA256, c.AskedArgumentsSHA256} {
			if h != "" && !isSHA256Hex(h) {
				return fmt.Errorf("%w: calls[%d]: a hash is not 64 lower-case hex digits", ErrInvalid, i)
			}
		}
		if c.Edited && (c.AskedArgumentsSHA256 == "" || c.ArgumentsSHA256 == "") {
			return fmt.Errorf("%w: calls[%d]: edited arguments need both hashes", ErrInvalid, i)
		}
	}
	return nil
}

// undecidedCalls reports whether the result leaves any tool call
// undecided: its own (one call's result), or any of a batch's.
func undecidedCalls(st Structured) bool {
	if st.Undecided {
		return true
	}
	for _, c := range st.Calls {
		if c.Approved == nil {
			return true
		}
	}
	return false
}

// writeCalls words a batch's outcomes: each call's id fenced (the agent's
// model made it), who decided it, then its outcome in server-made words.
func writeCalls(m *message, calls []CallOutcome) {
	for i, c := range calls {
		m.line(trusted("Tool call " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(calls)) + " of the batch: its id follows, then who decided it and its outcome."))
		m.region(Wrap(TagToolCallID, c.ToolCallID))
		switch c.DecidedBy {
		case CloserPerson:
			m.line("A human decided it; their untrusted display name follows:")
			m.region(Wrap(TagDeciderName, CleanName(c.Decider)))
		case CloserStanding:
			// checkCloser made sure the note's parts are plain.
			m.line(trusted("A standing approval (id " + c.Standing.ID + ") approved it at once, and no human looked at it; the untrusted display name of the person who granted it at " + c.Standing.GrantedAt + " follows:"))
			m.region(Wrap(TagDeciderName, CleanName(c.Decider)))
		case CloserRule:
			m.line("A policy rule of this server decided it at once, when it was asked; no human looked at it.")
			if c.RuleReason != "" {
				m.line("The rule's reason, as the server's operator wrote it, follows:")
				m.region(Wrap(TagReason, c.RuleReason))
			}
		}
		switch {
		case c.Approved == nil:
			m.line("Not decided before the batch closed: do not make this call.")
		case *c.Approved && c.Edited:
			m.line(trusted("Approved with changes: make it only with the approved arguments of its own result, which hash to sha256:" + c.ArgumentsSHA256 + "."))
		case *c.Approved:
			m.line(trusted("Approved: it covers only the arguments that hash to sha256:" + c.ArgumentsSHA256 + "."))
		default:
			m.line("Denied: do not make this call.")
		}
	}
}
