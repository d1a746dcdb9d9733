package discord

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// inbound is an interaction reduced to what askbridge acts on: whose
// click, on which ref, with what free text.
type inbound struct {
	// Submit is true for a modal submit (the text is in), false for a
	// button click.
	Submit  bool
	Ref     core.Ref
	Text    string
	Decider core.Decider
	// OnMessage is true when the interaction came from a message's
	// component, so the response may edit that message in place;
	// MessageID is that message.
	OnMessage bool
	MessageID string
	// Carried is true when that message, as Discord sent it, has a
	// button whose custom_id is the one acted on (onCard).
	Carried bool
}

// errNotOurs is an interaction askbridge did not ask for (a command, an
// unknown component, an undecodable custom_id). It reads like an unknown
// question to the clicker.
var errNotOurs = core.ErrNotFound

// errUnreadable is an interaction whose data discordgo could not read
// (a component newer than v0.29.0, such as a Label in a submitted
// modal): it is refused like one not ours, changing nothing, but its
// clicker is told so (unreadableNote), not that the question is gone:
// it is what they sent that could not be read, not the question that
// could not be found.
var errUnreadable = fmt.Errorf("%w: discordgo could not read the interaction's data", errNotOurs)

// unreadableNote is what the clicker of an unreadable interaction is
// told: true whatever they clicked or typed, and where else to answer.
const unreadableNote = "askbridge could not read what Discord sent for this, so nothing was recorded. Please answer in askbridge's console or with askbridge answer instead."

// parseInteraction translates an interaction at once into an inbound. It
// trusts nothing: custom_ids go through core.DecodeRef, and a modal's
// value is taken only from askbridge's own text input.
func parseInteraction(i *discordgo.Interaction) (inbound, error) {
	in := inbound{Decider: deciderOf(i), OnMessage: i.Message != nil}
	if i.Message != nil {
		in.MessageID = i.Message.ID
	}
	// discordgo hands on an interaction whose data it could not parse
	// (a component type newer than v0.29.0) with Data nil.
	switch d := i.Data.(type) {
	case nil:
		return in, errUnreadable
	case discordgo.MessageComponentInteractionData:
		if i.Type != discordgo.InteractionMessageComponent || d.ComponentType != discordgo.ButtonComponent {
			return in, errNotOurs
		}
		r, err := core.DecodeRef(d.CustomID)
		if err != nil {
			return in, errNotOurs
		}
		in.Ref = r
		in.Carried = carries(i.Message, d.CustomID)
	case discordgo.ModalSubmitInteractionData:
		if i.Type != discordgo.InteractionModalSubmit {
			return in, errNotOurs
		}
		r, err := core.DecodeRef(d.CustomID)
		if err != nil || !takesText(r) {
			return in, errNotOurs
		}
		in.Ref, in.Submit = r, true
		in.Text = modalText(d.Components)
		// A modal's custom_id is its button's (RenderModal).
		in.Carried = carries(i.Message, d.CustomID)
	default:
		return in, errNotOurs
	}
	return in, nil
}

// takesText reports whether a ref's button collects free text in a modal.
func takesText(r core.Ref) bool {
	return r.Action == core.RefText || r.Action == core.RefDeny || r.Action == core.RefEdit
}

// modalText finds the value of askbridge's one text input in a submitted
// modal (legacy ActionsRow + TextInput).
func modalText(comps []discordgo.MessageComponent) string {
	for c := range inRows(comps) {
		if ti := component[discordgo.TextInput](c); ti != nil && ti.CustomID == textInputID {
			return strings.ToValidUTF8(ti.Value, "\uFFFD")
		}
	}
	return ""
}

// inRows yields each component inside the action rows of comps.
func inRows(comps []discordgo.MessageComponent) iter.Seq[discordgo.MessageComponent] {
	return func(yield func(discordgo.MessageComponent) bool) {
		for _, c := range comps {
			row := component[discordgo.ActionsRow](c)
			if row == nil {
				continue
			}
			for _, cc := range row.Components {
				if !yield(cc) {
					return
				}
			}
		}
	}
}

// component is c as a T, or nil when it is none: discordgo decodes
// components as pointers, and values are taken too.
func component[T any](c discordgo.MessageComponent) *T {
	switch v := any(c).(type) {
	case *T:
		return v
	case T:
		return &v
	}
	return nil
}

// deciderOf maps the clicker to a core decider: a guild member with the
// roles the interaction carries (no REST call), or in a DM the user alone.
// Who may decide is core's business.
func deciderOf(i *discordgo.Interaction) core.Decider {
	d := core.Decider{Surface: core.SurfaceDiscord}
	var u *discordgo.User
	if i.Member != nil && i.Member.User != nil {
		u = i.Member.User
		d.Roles = append([]string(nil), i.Member.Roles...)
		d.Name = i.Member.Nick
	} else if i.User != nil {
		u = i.User
	}
	if u == nil {
		return d
	}
	d.ID = u.ID
	if d.Name == "" {
		d.Name = u.GlobalName
	}
	if d.Name == "" {
		d.Name = u.Username
	}
	d.Name = oneLine(d.Name)
	return d
}

// errNoTime is why a click was not taken: its budget was spent (on its
// dedupe) before the answer could start.
var errNoTime = errors.New("the interaction's response window was spent before its answer could be taken")

// respond handles one interaction from either transport and returns the
// response to send within Discord's three seconds: the card edited in
// place when the click counted, a modal when free text is needed, and a
// private note when nothing changed. With the card edited in place it also
// returns that card's update, delayed in the outbox (core.Pending): the
// transport cancels it (a.delivered) once the response has reached Discord,
// so the card is edited once per change, not twice.
//
// The work gets only what is left of answerBudget from arrived, as time
// already spent (the dedupe) counts against Discord's window too; with
// nothing left the answer is not taken, and the clicker is asked to try
// again.
func (a *Adapter) respond(ctx context.Context, i *discordgo.Interaction, arrived time.Time) (*discordgo.InteractionResponse, *core.Pending) {
	if i.Type == discordgo.InteractionPing {
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponsePong}, nil
	}
	if a.opts.AppID != "" && i.AppID != "" && i.AppID != a.opts.AppID {
		return RenderNote(card.RefusalNote(errNotOurs)), nil
	}
	in, err := parseInteraction(i)
	if errors.Is(err, errUnreadable) {
		return RenderNote(unreadableNote), nil
	}
	if err != nil {
		return RenderNote(card.RefusalNote(err)), nil
	}
	left := a.left(arrived)
	if left <= 0 {
		return a.refused(core.Internal("discord interaction", errNoTime)), nil
	}
	ctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	out, resp := a.act(ctx, in)
	if resp != nil {
		return resp, nil
	}
	// Who answered is in the event log, by pseudonym; the log names nobody.
	a.log.Debug().Str("question", string(out.Question.ID)).Bool("closed", out.Closed).Msg("discord: answer recorded")
	if in.OnMessage {
		return RenderUpdate(card.New(out.Question, cardOf(out.Question, in.MessageID))), out.Held
	}
	return RenderNote(card.RecordedNote(out.Question, in.Ref)), nil
}

// act hands one parsed interaction to core. It returns what the click
// recorded, or instead the response that ends it early (a modal to open,
// or a refusal).
func (a *Adapter) act(ctx context.Context, in inbound) (core.Outcome, *discordgo.InteractionResponse) {
	q, err := a.svc.Get(ctx, in.Ref.QuestionID)
	if err != nil {
		return core.Outcome{}, a.refused(err)
	}
	if note, ok := onCard(q, in); !ok {
		// Nothing reaches core: this is no attempt at this question.
		return core.Outcome{}, RenderNote(note)
	}
	// A button that collects text opens its modal, but only for someone
	// who may answer a question that is still open: anyone else goes
	// straight to the chokepoint below, which refuses and records why.
	if !in.Submit && takesText(in.Ref) && q.Open() && a.svc.MayAnswer(q, in.Decider) {
		c := card.New(q, cardOf(q, in.MessageID))
		if m, ok := RenderModal(c, in.Ref); ok {
			return core.Outcome{}, m
		}
		// A card drawn before the question changed: say what changed.
		return core.Outcome{}, RenderNote(noModal(q, c, in.Ref))
	}
	if !in.Submit && in.Ref.Action == core.RefEdit {
		// Nobody to open the modal for: say why, as the chokepoint would.
		return core.Outcome{}, a.refused(a.svc.Refusal(ctx, q, in.Decider))
	}
	// A click on the card itself is answered by editing the card in the
	// response, so core holds that card's update back.
	shown := ""
	if in.OnMessage {
		shown = in.MessageID
	}
	var out core.Outcome
	if in.Ref.Action == core.RefDecline {
		if in.Ref.QuestionID != q.ID {
			return core.Outcome{}, RenderNote(card.RefusalNote(errNotOurs))
		}
		out, err = a.svc.DeclineShown(ctx, q.ID, in.Decider, shown)
	} else {
		var ans core.AnswerInput
		if ans, err = core.AnswerFor(q, in.Ref, in.Decider, in.Text); err == nil {
			ans.Shown = shown
			out, err = a.svc.Answer(ctx, ans)
		}
	}
	if err != nil {
		return core.Outcome{}, a.refused(err)
	}
	return out, nil
}

// dropBound bounds the drop of a held card update after its response
// went out. Nobody waits on the drop, so the bound is generous: one that
// gives up under a burst of clicks on a busy store (two seconds did, with
// a hundred clicks at once on a loaded machine) costs each of those cards
// a second edit when its hold passes.
const dropBound = 10 * time.Second

// delivered tells core that a response carrying a held card update
// reached Discord, so the outbox does not edit the card again. It runs
// after the interaction is answered, so it outlives the request (Discord
// may hang up as soon as it has the response), bounded by dropBound.
// If it fails, the held update falls due and edits the card once more.
func (a *Adapter) delivered(ctx context.Context, h *core.Pending) {
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropBound)
	defer cancel()
	if err := a.svc.Delivered(ctx, h); err != nil {
		a.log.Debug().Err(err).Msg("discord: a card updated in place may be edited once more")
	}
}

// cardOf is the recorded card that is the Discord message id, so an
// in-place edit keeps what the card was posted as; a message not (yet)
// recorded reads as a first post.
func cardOf(q *core.Question, id string) core.MessageRef {
	if m, ok := cardRef(q, id); ok {
		return m
	}
	return core.MessageRef{Surface: core.SurfaceDiscord, ID: id, Kind: core.DeliverPost}
}

// refused is the private note for a click that changed nothing. Internal
// errors are logged; the rest are the clicker's news, not ours.
func (a *Adapter) refused(err error) *discordgo.InteractionResponse {
	var closed *core.ClosedError
	if core.ErrorCode(err) == core.CodeInternal && !errors.As(err, &closed) {
		a.log.Error().Err(err).Msg("discord: could not handle a click")
	}
	return RenderNote(card.RefusalNote(err))
}
