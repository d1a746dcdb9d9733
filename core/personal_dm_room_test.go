package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestPersonalDirectMessageRoomsAreNotLogged: a person's direct message by
// email (room dm:<address>) given up on is logged by the room's pseudonym
// in its reason too, where the relay's refusal quotes the address alone;
// before, the reason held it as the relay spelt it.
func TestPersonalDirectMessageRoomsAreNotLogged(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	const addr = "alice@example.com"
	room := core.DMRoom(addr)
	d := core.Delivery{Key: string(q.ID) + ":post:dm:alice", Kind: core.DeliverPost, Surface: core.SurfaceEmail, Room: room, QuestionID: q.ID, Attempts: 8}
	refusal := errors.New(`550 "5.1.1 <Alice@Example.com>: mailbox unavailable", affected recipient(s): <` + addr + `>`)
	key, reason := svc.Logged(d, refusal)
	svc.Attempted(t.Context(), d, refusal, true)
	evs, err := svc.QuestionEvents(t.Context(), q.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	logged := key + " " + reason
	for _, e := range evs {
		logged += string(e.Payload) + e.Reason
	}
	if s := strings.ToLower(logged); strings.Contains(s, addr) || !strings.Contains(s, "mailbox unavailable") {
		t.Fatalf("the log line and the event log: %s; want the address by pseudonym, the refusal's words kept", logged)
	}
}
