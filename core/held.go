package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// ShownHold is how long the update of a card that a click's own response
// shows (AnswerInput.Shown) waits before the outbox may send it. Discord
// wants an interaction answered within three seconds, and the adapter
// answers within 2.5; five seconds leaves room for the response to reach
// the platform and for the adapter to say so (Service.Delivered), which
// drops the update. If it never says so (the response failed, the process
// died), the update falls due and the outbox edits the card: at worst one
// edit too many, never a card left showing an old state.
const ShownHold = 5 * time.Second

// Held is one card's update delivery held back because the caller's own
// response carries the update (a Discord click answered by editing the
// card it was on). It is enqueued in the same atomic step as the change,
// due only after For on the store's clock, so that it is never sent
// before the response had its chance; Service.Delivered drops it.
type Held struct {
	QuestionID QuestionID
	Surface    Surface
	// MessageID is the card: the platform's message id, as recorded in
	// Question.Messages.
	MessageID string
	// Key is the held delivery's key (Delivery.Key), by which it is
	// dropped; core makes it unique per transition.
	Key string
	// For is the hold: how long the delivery waits to be dropped before
	// it falls due.
	For time.Duration
}

// newHeld names the held update of card messageID on surface for a
// transition of question id: a fresh key, so that two changes of one card
// in quick succession each hold their own delivery.
func newHeld(id QuestionID, surface Surface, messageID string) *Held {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("core: no randomness: " + err.Error())
	}
	return &Held{QuestionID: id, Surface: surface, MessageID: messageID,
		Key: string(id) + "/update/held/" + hex.EncodeToString(b[:]), For: ShownHold}
}

// Delivered tells core that the caller's response carrying the held
// card's update reached the platform (a gateway callback answered without
// error, or an HTTP interaction's response written and flushed): the held
// delivery is dropped, so the card is not edited a second time with the
// same state. h may be nil (nothing was held). The store leaves the
// delivery to run if it was already handed out, or if the question changed
// again since (a later change's own edit may have reached the platform
// before this response did, which then showed an older state). A store
// error leaves it to run too, so it is only reported.
func (s *Service) Delivered(ctx context.Context, h *Held) error {
	if h == nil {
		return nil
	}
	_, err := s.store.DropHeld(ctx, *h)
	return Internal("drop held update", err)
}
