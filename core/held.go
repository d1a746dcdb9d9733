package core

import (
	"context"
	"time"
)

// A click whose own response shows the card it was on (a Discord button
// answered with UPDATE_MESSAGE) has already edited that card: the outbox
// need not edit it again. Core decides this in one place, here and in
// changeOf: the shown card's update is an ordinary delivery of the change
// with a Delay (ShownHold), and the caller cancels it (Service.Delivered)
// once its response is on its way. Stores know nothing of cards shown:
// they keep a delayed delivery back and let it be cancelled (Outbox.Cancel).

// ShownHold is how long the update of a card that a click's own response
// shows (AnswerInput.Shown) waits before the outbox may send it. Discord
// wants an interaction answered within three seconds, and the adapter
// answers within 2.5; five seconds leaves room for the response to reach
// the platform and for the adapter to say so (Service.Delivered), which
// cancels the update. If it never says so (the response failed, the
// process died), the update falls due and the outbox edits the card: at
// worst one edit too many, never a card left showing an old state.
const ShownHold = 5 * time.Second

// ShownCard names the card a caller's own response shows: its surface and
// its platform message id, as recorded in Question.Messages.
type ShownCard struct {
	Surface   Surface
	MessageID string
}

// shows reports whether m is the card s names.
func (s *ShownCard) shows(m MessageRef) bool {
	return s != nil && m.Surface == s.Surface && m.ID == s.MessageID
}

// heldOf names the delayed update of c, the card its caller's response
// shows, for Service.Delivered to cancel; nil if c delays none. The
// cancel holds only while the question is at c's version: the state the
// response shows.
func heldOf(c Change) *Pending {
	for _, d := range c.Updates {
		if d.Delay > 0 {
			ver := c.Question.Version
			return &Pending{Surface: d.Surface, Key: d.Key, QuestionID: c.Question.ID, IfVersion: &ver}
		}
	}
	return nil
}

// Delivered tells core that the caller's response carrying the held
// card's update reached the platform (a gateway callback answered without
// error, or an HTTP interaction's response written and flushed): the
// delayed update is cancelled, so the card is not edited a second time
// with the same state. h may be nil (nothing was held). The store leaves
// the update to run if it was already handed out, or if the question
// changed again since (a later change's own edit may have reached the
// platform before this response did, which then showed an older state).
// A store error leaves it to run too, so it is only reported.
func (s *Service) Delivered(ctx context.Context, h *Pending) error {
	if h == nil {
		return nil
	}
	_, err := s.store.Cancel(ctx, *h)
	return Internal("cancel held update", err)
}
