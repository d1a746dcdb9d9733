package core_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestPersonalRoomsAreNotLogged: the event log names a one-way door's
// recipient (an email address, an ntfy topic, which works as a password)
// by its pseudonym, in a card's notice and in a delivery given up on, and
// a chat room as it is; before, the log, which names nobody and is
// exported, held the address and the topic, and still did in the
// delivery's key after their rooms were pseudonymised, as it held a
// direct message's recipient by name.
func TestPersonalRoomsAreNotLogged(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	const addr, topic = "alice@example.com", "s3cret-topic-of-alice"
	if err := svc.RecordMessage(t.Context(), q.ID, core.MessageRef{Surface: core.SurfaceEmail, Room: addr, ID: "m1", Delivery: string(q.ID) + ":post:email:" + addr, Kind: core.DeliverPost}); err != nil {
		t.Fatal(err)
	}
	if err := svc.RecordMessage(t.Context(), q.ID, core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1.2", Delivery: "d2", Kind: core.DeliverPost}); err != nil {
		t.Fatal(err)
	}
	// The platforms' errors quote the recipient: a relay's refusal the
	// address (in another case, too), a failed request its URL.
	svc.Attempted(t.Context(), core.Delivery{Key: string(q.ID) + ":post:email:" + addr, Kind: core.DeliverPost, Surface: core.SurfaceEmail, Room: addr, QuestionID: q.ID, Attempts: 8},
		errors.New("550 5.1.1 <Alice@Example.com>: mailbox unavailable, affected recipient(s): "+addr), true)
	svc.Attempted(t.Context(), core.Delivery{Key: string(q.ID) + ":post:ntfy:" + topic, Kind: core.DeliverPost, Surface: core.SurfaceNtfy, Room: topic, QuestionID: q.ID, Attempts: 8},
		errors.New(`Post "https://ntfy.example/`+topic+`": 503`), true)
	// A direct message's key spells the person's configured name.
	svc.Attempted(t.Context(), core.Delivery{Key: string(q.ID) + ":post:dm:alice", Kind: core.DeliverPost, Surface: core.SurfaceTelegram, Room: core.DMRoom("2002"), QuestionID: q.ID, Attempts: 8},
		errors.New("503"), true)
	evs, err := svc.QuestionEvents(t.Context(), q.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for _, e := range evs {
		log.Write(e.Payload)
		log.WriteString(e.Reason)
	}
	pseudonyms := regexp.MustCompile(`"room":"[0-9a-f]{32}"`)
	if s := strings.ToLower(log.String()); strings.Contains(s, addr) || strings.Contains(s, topic) || strings.Contains(s, "dm:alice") || !strings.Contains(s, `"room":"c1"`) || len(pseudonyms.FindAllString(s, -1)) != 3 || !strings.Contains(s, "mailbox unavailable") {
		t.Fatalf("the log's payloads and reasons: %s; want the address, the topic and the name by pseudonym, the Slack room as it is, the refusal's words kept", s)
	}
}

// TestDeciderLabelNamesNoRecipient: who answered from a one-way door,
// with no configured name, is named by the door alone, never by the
// address or topic they answered as; a chat account still by its id.
func TestDeciderLabelNamesNoRecipient(t *testing.T) {
	for _, c := range []struct {
		d    core.Decider
		want string
	}{
		{core.Decider{Surface: core.SurfaceEmail, ID: "alice@example.com"}, "an email recipient"},
		{core.Decider{Surface: core.SurfaceNtfy, ID: "s3cret-topic"}, "an ntfy subscriber"},
		{core.Decider{Surface: core.SurfaceNtfy, ID: "s3cret-topic", Name: "Alice"}, "Alice"},
		{core.Decider{Surface: core.SurfaceSlack, ID: "U1"}, "U1"},
	} {
		d, want := c.d, c.want
		if got := core.DeciderLabel(d); got != want {
			t.Errorf("%+v: %q, want %q", d, got, want)
		}
	}
}

// TestClosedErrorNamesNoRecipient: the refusal of a late answer names
// who closed the question, but a one-way door's recipient by the door
// alone; before, it quoted the ntfy topic, which works as a password.
func TestClosedErrorNamesNoRecipient(t *testing.T) {
	q := &core.Question{ID: "aaaaaaaaaaaaaaaaa", State: core.StateAnswered,
		Resolution: &core.Resolution{State: core.StateAnswered, Decider: core.Decider{Surface: core.SurfaceNtfy, ID: "s3cret-topic"}}}
	if msg := (&core.ClosedError{Question: q}).Error(); strings.Contains(msg, "s3cret-topic") || !strings.Contains(msg, "ntfy") {
		t.Fatalf("the refusal: %q; want the door named and not the topic", msg)
	}
}
