package card

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
)

// The notes below are what a person alone is told after they acted on a
// card: what counted, or the truth about why nothing did. Every surface
// sends these same sentences, in its own markup and within its own limits
// (a cut keeps the start, so the start says the most).

// ErrNotText refuses a reply that carried a file, a photo, a sticker or
// any other attachment: only words reach the agent, and recording them
// without what they point at ("see the attached log") would resume the
// agent on half an answer. Nothing is recorded; the replier is asked for
// text alone.
var ErrNotText = core.Errorf(core.CodeInvalid, "reply", "Only text can be recorded, and your reply carried an attachment: nothing was recorded. Reply again with text alone.")

// Refuser says why a person's answer to q would not count, nil if it
// would (core.Service.Refusal).
type Refuser interface {
	Refusal(ctx context.Context, q *core.Question, d core.Decider) error
}

// RefuseNotText is why d's reply to q that carried an attachment records
// nothing: first why it would not count anyway (q is closed, or not d's
// to answer), and only then that it must be text (ErrNotText).
func RefuseNotText(ctx context.Context, r Refuser, q *core.Question, d core.Decider) error {
	if err := r.Refusal(ctx, q, d); err != nil {
		return err
	}
	return ErrNotText
}

// RefusalNote is the private note a clicker gets when their click changed
// nothing: the truth about why, in a sentence.
func RefusalNote(err error) string {
	var closed *core.ClosedError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &closed) && closed.Own:
		// A double tap, or the same person on a second surface: their
		// first answer closed it and stands.
		return "Already closed by your earlier answer: " + OutcomeLine(closed.Question) + ". That answer stands; nothing more was recorded."
	case errors.As(err, &closed):
		// The card's own outcome line: a timeout or an expiry after some
		// parts or votes says so, like everything else that closed it.
		return "Already closed. " + OutcomeLine(closed.Question) + ". Your answer was not recorded."
	case core.ErrorCode(err) == core.CodeForbidden && actRefused(err):
		// One who may answer, refused this way of answering: "not one
		// of the people" would be false, and would hide the way open to
		// them that core's reason names.
		return sentence(core.ErrorMessage(err)) + " Nothing was recorded."
	case core.ErrorCode(err) == core.CodeForbidden:
		return "You are not one of the people who may answer this question. Nothing was recorded."
	case core.ErrorCode(err) == core.CodeNotFound:
		return "This question no longer exists."
	case core.Unavailable(err):
		// The store may have recorded it before the failure (a failover
		// cut the reply, a replica did not confirm in time): the card
		// may well show it answered. A second click is told the truth.
		return UnavailableNote
	case core.OutcomeUnknown(err):
		// The platform's window for a reply ran out with the store's
		// write sent: it may yet be recorded. A read or a check that ran
		// out of time wrote nothing, and is told to try again below.
		return TimedOutNote
	case core.ErrorCode(err) == core.CodeInternal:
		return "askbridge could not record that just now; please try again."
	}
	return core.ErrorMessage(err)
}

// actRefused reports whether err, a CodeForbidden refusal, refuses the
// act rather than the person: they may answer, but not this way.
func actRefused(err error) bool { return errors.Is(err, core.ErrNotThisWay) }

// sentence is msg, core's caller-safe text, as a sentence of a note:
// begun with a capital, ended with a full stop unless it ends one.
func sentence(msg string) string {
	if msg == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(msg)
	msg = string(unicode.ToUpper(r)) + msg[n:]
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "!") && !strings.HasSuffix(msg, "?") {
		msg += "."
	}
	return msg
}

// PartDoneNote is the note for a click on a form item's or a batch
// call's button that a card not yet edited still shows, when that part
// has its answer: who gave it, when, and that nothing was recorded. ok is
// false when r names no part of q or the part is still open.
func PartDoneNote(q *core.Question, r core.Ref) (note string, ok bool) {
	var id, what string
	switch {
	case r.Item < 0:
		return "", false
	case r.Item < len(q.Items):
		id, what = q.Items[r.Item].ID, fmt.Sprintf("Item %d was already answered", r.Item+1)
	case r.Item < len(q.Calls):
		id, what = q.Calls[r.Item].ToolCallID, fmt.Sprintf("Call %d was already decided", r.Item+1)
	default:
		return "", false
	}
	a, done := q.Answered(id)
	if !done {
		return "", false
	}
	return what + " by " + PartBy(a) + " at " + a.At.UTC().Format(outcomeTime) + ". Nothing was recorded.", true
}

// TooLongToEdit is what a card and a note say on a platform whose edit
// form cannot hold the arguments whole.
func TooLongToEdit(platform string) string {
	return "These arguments are too long to edit in " + platform + ": edit and approve them in the console or through the API."
}

// NoFormNote is the note for a click on a button that collects text (an
// edit, "Something else") when no form opens for it on the question as
// it stands (a card drawn before the question changed): the part it is
// for was answered meanwhile, or the arguments are too long for the
// platform's form (tooLong, its TooLongToEdit; "" when they fit), or else
// the button does not fit the question.
func NoFormNote(q *core.Question, r core.Ref, tooLong string) string {
	if note, done := PartDoneNote(q, r); done {
		return note
	}
	if tooLong != "" {
		return tooLong + " Nothing was recorded."
	}
	return RefusalNote(core.Errorf(core.CodeInvalid, "button", "the button does not fit this question"))
}

// NotOnCardNote is the note for a click whose data is not a button of
// the message it came from (or did not come from one of the question's
// cards): a modified client's, which nothing of the question reads. The
// platforms that take a click's data from the client (Telegram,
// Discord, Teams) refuse such a click with it.
const NotOnCardNote = "That button is not on this question's card. Nothing was recorded."

// UnavailableNote is the note for a click whose store failed over while
// recording it: what was asked may or may not have been recorded.
const UnavailableNote = "askbridge's store is failing over, so your answer may or may not have been recorded. Try again in a moment: if it was recorded, you will be told so."

// TimedOutNote is the note for a click that was still being recorded
// when the time to reply to it ran out (a chat platform's few seconds): the
// write was sent, or goes on without anyone waiting for it, so the store
// may yet record it. "Could not record" would be false as often as not,
// and a person who believes it and answers differently elsewhere would be
// told the first answer stood.
const TimedOutNote = "askbridge ran out of time recording that, so it may or may not have been recorded. If it was, the card will show it; try again in a moment and you will be told."

// RecordedNote is the private note a person gets when what they did
// counted: r is the button they pressed (RefText for free text they
// wrote) and q the question as it stands after it.
func RecordedNote(q *core.Question, r core.Ref) string {
	if r.Action == core.RefDecline {
		if q != nil && q.Kind == core.KindApproval {
			return "Recorded: you declined. The agent makes " + noUnapproved + "."
		}
		return "Recorded: you declined. The agent will proceed on its own judgement."
	}
	var k kindCard
	if q != nil {
		k = kindCardOf(q)
	}
	if k.parts != nil && k.note != nil {
		if n := k.note(q, r); n != "" {
			return n
		}
	}
	if q != nil && q.Open() && q.Quorum > 1 {
		return "Recorded your vote (" + strings.Join(TallyOf(q).Lines, "; ") + "). The question stays open until enough people agree."
	}
	switch r.Action {
	case core.RefApprove:
		return "Recorded: Approved"
	case core.RefEdit:
		return "Recorded: " + ChoiceLabel(q)
	case core.RefStanding:
		return standingNote(q, r)
	case core.RefDeny:
		return "Recorded: Denied"
	}
	if q == nil {
		return "Recorded."
	}
	if k.parts == nil && k.note != nil {
		if n := k.note(q, r); n != "" {
			return n
		}
	}
	return "Recorded: your answer"
}

// Notes for a reply recorded as an answer whose writer edited it, or that
// was deleted afterwards. A question closes once (law 2) and the agent may
// already have acted on the answer, but the platforms that thread
// replies (Slack, Teams) let the reply change all the same: its writer is
// told privately that the answer stands as first written.
const (
	EditedAnswerNote  = "Your answer was recorded as you first wrote it; editing your reply does not change it. The card shows the answer that counts."
	DeletedAnswerNote = "A reply of yours was deleted, but the answer it gave was recorded before and still stands; the card shows it."
)
