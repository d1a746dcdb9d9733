package slack

import (
	"context"
	"errors"

	"github.com/slack-go/slack"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// Slack's limits on a modal (Block Kit reference).
const (
	maxModalTitle  = 24
	maxInputLength = 3000 // plain_text_input max_length
	maxErrorText   = 300
	// editBlock names the one input of the edit modal, as block and
	// action id alike.
	editBlock = "arguments"
)

// EditView is the modal of "Edit and approve" for the card's action r:
// the arguments as asked, in one multi-line input to change in place.
// The ref rides as callback_id, and the card's channel as
// private_metadata (for the private note), so the submission needs no
// state of ours (law 5).
// ok is false when the card has no such action, or its arguments do not
// fit the input whole (editFits): started empty, an edit would replace
// them.
func EditView(c card.Card, r core.Ref, channel string) (slack.ModalViewRequest, bool) {
	id := r.Encode()
	act, tool, found := editActionOf(c, r)
	if id == "" || !found || !editFits(act) {
		return slack.ModalViewRequest{}, false
	}
	input := slack.NewPlainTextInputBlockElement(slack.NewTextBlockObject(slack.PlainTextType, "{}", false, false), editBlock)
	input.Multiline = true
	input.MaxLength = maxInputLength
	input.InitialValue = act.Prefill
	about := codeSpan(tool, core.MaxToolLen) + ": change the arguments, then approve. Only the keys the agent allows may change; askbridge says which if another one does."
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, card.LabelEditApprove, false, false), // within maxModalTitle
		Submit:          slack.NewTextBlockObject(slack.PlainTextType, card.LabelApprove, false, false),
		Close:           slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false),
		CallbackID:      id,
		PrivateMetadata: channel,
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			section("about", about),
			slack.NewInputBlock(editBlock, slack.NewTextBlockObject(slack.PlainTextType, "Arguments (one JSON object)", false, false), nil, input),
		}},
	}, true
}

// openEdit answers a click on "Edit and approve" by opening its modal,
// for someone who may answer a question still open; anyone else hears
// why not, as the chokepoint would tell them. It returns the private
// note ("" once the modal is open: the modal is the answer).
func (a *Adapter) openEdit(ctx context.Context, q *core.Question, ref core.Ref, d core.Decider, c click) string {
	if err := a.svc.Refusal(ctx, q, d); err != nil {
		return a.refusal(err)
	}
	cd := card.New(q, core.MessageRef{})
	v, ok := EditView(cd, ref, c.channel)
	if !ok {
		// A card drawn before the question changed: say what changed.
		return noEdit(q, cd, ref)
	}
	if _, err := a.api.OpenViewContext(ctx, c.trigger, v); err != nil {
		a.log.Warn().Err(err).Str("question", string(q.ID)).Msg("slack: edit modal not opened")
		return "askbridge could not open the form just now; please try again."
	}
	return ""
}

// onSubmit takes a submitted edit modal to core. It returns the response
// Slack shows in the modal (nil closes it: the answer counted) and the
// private note for the channel.
func (a *Adapter) onSubmit(ctx context.Context, ic slack.InteractionCallback) (*slack.ViewSubmissionResponse, note) {
	ref, err := core.DecodeRef(ic.View.CallbackID)
	if err != nil || ref.Action != core.RefEdit || ic.User.ID == "" {
		return nil, note{} // not a modal of ours
	}
	channel := ic.View.PrivateMetadata
	text := ""
	if ic.View.State != nil {
		text = ic.View.State.Values[editBlock][editBlock].Value
	}
	q, err := a.svc.Get(ctx, ref.QuestionID)
	var d core.Decider
	if err == nil {
		d, err = a.decider(ctx, q, ic.User.ID, ic.User.TeamID, ic.User.Name)
	}
	if err == nil {
		var in core.AnswerInput
		if in, err = core.AnswerFor(q, ref, d, text); err == nil {
			var out core.Outcome
			if out, err = a.svc.Answer(ctx, in); err == nil {
				// The card itself is edited through the outbox.
				return nil, note{channel: channel, user: ic.User.ID, text: card.RecordedNote(out.Question, ref)}
			}
		}
	}
	return submitErrors(a.refusal(err)), note{}
}

// busySubmit is the response to a submitted edit modal that no handler
// was free to take within Slack's window: nothing was taken, and the
// modal stays open to submit again. A modal not of ours is closed.
func (a *Adapter) busySubmit(ic slack.InteractionCallback) *slack.ViewSubmissionResponse {
	if ref, err := core.DecodeRef(ic.View.CallbackID); err != nil || ref.Action != core.RefEdit {
		return nil
	}
	return submitErrors(a.refusal(core.Internal("slack modal", errBusy)))
}

var errBusy = errors.New("every handler was busy for the whole of Slack's window")

// submitErrors is Slack's response_action "errors" showing msg under the
// modal's input, on one line and within Slack's length.
func submitErrors(msg string) *slack.ViewSubmissionResponse {
	msg = textlimit.OneLine(msg)
	if r := []rune(msg); len(r) > maxErrorText {
		msg = string(r[:maxErrorText-1]) + "…"
	}
	return slack.NewErrorsViewSubmissionResponse(map[string]string{editBlock: msg})
}
