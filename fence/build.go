package fence

import (
	"fmt"
	"strconv"
)

// BuildResume composes the resume message. It begins with one trusted
// header line that carries only the question id and the verb, then fixed
// server sentences, each introducing the fenced region that follows it:
// the decider's display name, the chosen option, the answer or write-up,
// form items, the reason, and for a decline (but a gated call's) the
// fenced DeclineText.
//
// The wording is honest about who did what, and comes from the recorded
// Closer and the parts' own deciders, never from the verb alone: a
// timed-out question says that nobody answered before the deadline (or
// how far it got), never that a human denied anything; a gated call
// nobody approved is told not to be made, however it closed; a batch a
// standing approval decided says no human looked at it; a batch several
// people decided names each call's decider, not one for all.
//
// Each part of the message has one writer below, in the order the message
// reads: a kind's wording (an approval's, a decision's, a form's, a
// quorum's votes, a decline's) is changed in its writer alone.
//
// It returns an error wrapping ErrInvalid for an empty or malformed id, an
// unknown verb, a closer that does not fit the verb or the data, a name
// where no person acted, a body on a decline, a malformed arguments
// hash, or Approval on a batch.
func BuildResume(in ResumeInput) (Resume, error) {
	if err := checkResumeInput(in); err != nil {
		return Resume{}, err
	}
	var m message
	m.line(header(in.QuestionID, in.Verb))
	m.line(preamble)
	writeOpening(&m, in)
	if id := in.Structured.ToolCallID; id != "" {
		m.line("This result is for one tool call of a batch; the tool call's id follows:")
		m.region(Wrap(TagToolCallID, id))
	}
	writeWho(&m, in)
	writeApproval(&m, in)
	writeCalls(&m, in.Structured.Calls)
	writeChoice(&m, in)
	writeBody(&m, in)
	writeItems(&m, in.Items)
	writeVotes(&m, in.Votes)
	writeReason(&m, in)
	writeDeclined(&m, in)
	return Resume{Text: m.String(), Structured: structuredOf(in)}, nil
}

// checkResumeInput refuses input no honest message can be made from.
func checkResumeInput(in ResumeInput) error {
	if err := checkQuestionID(in.QuestionID); err != nil {
		return err
	}
	if !in.Verb.Valid() {
		return fmt.Errorf("%w: verb %q is not one of %v", ErrInvalid, in.Verb, verbs)
	}
	if in.Verb == VerbDeclined && in.Body != "" {
		return fmt.Errorf("%w: a decline takes no body; its text is DeclineText", ErrInvalid)
	}
	if h := in.Structured.ArgumentsSHA256; h != "" && !isSHA256Hex(h) {
		return fmt.Errorf("%w: arguments_sha256 is not 64 lower-case hex digits", ErrInvalid)
	}
	if err := checkApproval(in); err != nil {
		return err
	}
	if st := in.Structured; in.Approval && (len(st.Calls) > 0 || st.ToolCallID != "" || st.Undecided) {
		return fmt.Errorf("%w: Approval is one gated call's; a batch's calls word their own outcomes", ErrInvalid)
	}
	return checkCloser(in)
}

// notApproved is what every resume of a gated call that was not
// approved, and that no person or rule denied, says of the call.
const notApproved trusted = "The gated tool call was not approved: do not make it."

// writeApproval words a gated tool call's outcome: who or what approved or
// denied it, or that nobody approved it; the hash the decision covers;
// and edited arguments, fenced.
func writeApproval(m *message, in ResumeInput) {
	who, human := subject(in.Closer)
	if a := in.Structured.Approved; a != nil {
		switch {
		case in.Closer == CloserStanding:
			m.line("The standing approval approved the gated tool call.")
		case in.Closer == CloserRule && *a:
			m.line("The policy rule allowed the gated tool call; no human approved it.")
		case in.Closer == CloserRule:
			m.line("The policy rule denied the gated tool call: do not make it.")
		case human && *a && in.Structured.Edited:
			m.line(trusted(who + " approved the gated tool call with changes: make it with the approved arguments that follow, and only those, never with the arguments first asked for."))
		case human && *a:
			m.line(trusted(who + " approved the gated tool call."))
		case human:
			m.line(trusted(who + " denied the gated tool call: do not make it."))
		case *a:
			m.line("No human approved the gated tool call; the question's policy allowed it when the question closed without an answer.")
		default:
			m.line(notApproved)
		}
	} else if in.Approval {
		// Nobody decided the call: a decline or a withdrawal must not
		// read as leave to go ahead, nor a voter's fenced "approve" as
		// the verdict.
		m.line(notApproved)
	}
	if in.Structured.Undecided {
		if in.Verb == VerbTimedOut {
			m.line("This tool call was not decided before the deadline: do not make it.")
		} else {
			m.line("This tool call was not decided before the batch closed: do not make it.")
		}
	}
	if h := in.Structured.ArgumentsSHA256; h != "" {
		m.line(trusted("This decision covers only the tool call whose arguments hash to sha256:" + h + ".")) // h is checked hex
	}
	if in.Structured.Edited {
		// checkApproval made sure both hashes are hex.
		m.line(trusted("The arguments first asked for hashed to sha256:" + in.Structured.AskedArgumentsSHA256 + "; they were not approved. The approved arguments follow, as JSON a person wrote:"))
		m.region(Wrap(TagArguments, string(in.Structured.ApprovedArguments)))
	}
}

// writeChoice names a decision's chosen option, and who chose it.
func writeChoice(m *message, in ResumeInput) {
	id := in.Structured.ChosenOptionID
	if id == "" {
		return
	}
	if who, human := subject(in.Closer); human {
		m.line(trusted("The id of the option " + lowerThe(who) + " chose follows, as the asking agent defined it:"))
	} else {
		m.line("The id of the option the question's policy applied follows; no human chose it:")
	}
	m.region(Wrap(TagOptionID, id))
}

// writeBody fences the answer, or the chosen option's write-up, saying
// whose words they are.
func writeBody(m *message, in ResumeInput) {
	if in.Body == "" {
		return
	}
	_, human := subject(in.Closer)
	tag := TagAnswer
	switch {
	case in.Structured.ChosenOptionID != "" && human:
		tag = TagWriteup
		m.line("The write-up of the chosen option follows:")
	case in.Structured.ChosenOptionID != "":
		tag = TagWriteup
		m.line("The write-up of the option the policy applied follows:")
	case in.Closer == CloserPerson:
		m.line("The human's answer follows:")
	case human:
		m.line("The answer the voters agreed on follows:")
	default:
		m.line("The answer the question's policy supplied follows; no human wrote it for this question:")
	}
	m.region(Wrap(tag, in.Body))
}

// writeItems fences a form's answers item by item, with the person who
// answered each one when the form was answered in parts.
func writeItems(m *message, items []ItemAnswer) {
	for i, it := range items {
		n := "Answered form item " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(items)) + ": its id, "
		if it.DecidedBy == CloserPerson {
			n += "then the untrusted display name of the person who answered it, "
		}
		m.line(trusted(n + "then the option chosen and the free text given, where there are any:"))
		m.region(Wrap(TagItemID, it.ItemID))
		if it.DecidedBy == CloserPerson {
			m.region(Wrap(TagDeciderName, CleanName(it.Decider)))
		}
		if it.OptionID != "" {
			m.region(Wrap(TagOptionID, it.OptionID))
		}
		if it.Text != "" {
			m.region(Wrap(TagItemAnswer, it.Text))
		}
	}
}

// writeVotes fences a quorum's votes: each voter's name, choice and words.
func writeVotes(m *message, votes []Vote) {
	if len(votes) == 0 {
		return
	}
	m.line(trusted("This question needed several people to agree. " + strconv.Itoa(len(votes)) + " voted; each vote follows as the voter's display name, the option they chose, and their words where they gave any:"))
	for _, v := range votes {
		m.region(Wrap(TagDeciderName, CleanName(v.Name)))
		m.region(Wrap(TagOptionID, v.Choice))
		if v.Text != "" {
			m.region(Wrap(TagReason, v.Text))
		}
	}
}

// writeReason fences the recorded reason, saying whose it is.
func writeReason(m *message, in ResumeInput) {
	if in.Reason == "" {
		return
	}
	switch in.Closer {
	case CloserPerson:
		m.line("The human's reason follows:")
	case CloserDecline:
		m.line("The human's reason for declining follows:")
	case CloserRule:
		m.line("The rule's reason, as the server's operator wrote it, follows:")
	case CloserBridgeCancel:
		m.line("askbridge's own reason for withdrawing it follows:")
	default:
		m.line("The recorded reason follows:")
	}
	m.region(Wrap(TagReason, in.Reason))
}

// writeDeclined ends a decline with what to do now: never leave to make
// a gated call nobody approved.
func writeDeclined(m *message, in ResumeInput) {
	switch {
	case in.Verb != VerbDeclined:
	case undecidedCalls(in.Structured):
		// A declined batch leaves calls nobody approved: proceeding on
		// one's own judgement must not read as leave to make them.
		m.line("The human declined to decide the tool calls above that are not decided: make none of them.")
	case in.Approval:
		// writeApproval has said the call is not approved; what is left
		// to the agent's judgement is the rest of its work.
		m.line("Go on without that tool call, on your own best judgement, and state the assumption you made in your result so that a reviewer can check it.")
	default:
		// Fenced like everything else: a later "this one is trusted"
		// branch is how unfenced text would creep back in.
		m.line("What to do now follows:")
		m.region(Wrap(TagDecline, DeclineText))
	}
}

// structuredOf is the data beside the text, fenced like it: every string
// a person wrote or is named by becomes its fenced region, and display
// names of parts' deciders and rules' reasons, which the text carries,
// are left out.
func structuredOf(in ResumeInput) Structured {
	st := in.Structured
	if st.Items == nil && in.Items != nil {
		st.Items = in.Items
	}
	if st.Items != nil {
		items := make([]ItemAnswer, len(st.Items))
		for i, it := range st.Items {
			it.Text, it.Decider = fencedData(TagItemAnswer, it.Text), "" // names go into the text, fenced, never into the data
			items[i] = it
		}
		st.Items = items
	}
	if st.Calls != nil {
		calls := make([]CallOutcome, len(st.Calls))
		for i, c := range st.Calls {
			// The text carries both, fenced; the data is copied field by
			// field into wire types, where a raw string has no place.
			c.Decider, c.RuleReason = "", ""
			calls[i] = c
		}
		st.Calls = calls
	}
	if st.Votes == nil && in.Votes != nil {
		st.Votes = in.Votes
	}
	if st.Votes != nil {
		votes := make([]Vote, len(st.Votes))
		for i, v := range st.Votes {
			v.Name, v.Text = Wrap(TagDeciderName, CleanName(v.Name)).String(), fencedData(TagReason, v.Text)
			votes[i] = v
		}
		st.Votes = votes
	}
	return st
}
