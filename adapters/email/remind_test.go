package email_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestReminderKeepsTheCardsSubject: a reminder's subject is "Re: " and
// its card's, so that mail clients which thread by subject (Gmail) put
// it under the card it reminds of, even when the card's subject was
// cut; the body still says that it is a reminder. Before, its subject
// began "Still waiting for an answer:" instead of the card's marker, and
// it started a thread of its own.
func TestReminderKeepsTheCardsSubject(t *testing.T) {
	e := newEnv(t)
	e.deliver()
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the staging table? " + strings.Repeat("It is left over from the nightly job. ", 4),
		Tool: "sql.exec", Arguments: []byte(`{"sql":"DROP TABLE t"}`)})
	first := e.mail(alice, 1)
	if err := e.a.Remind(t.Context(), e.get(q.ID), alice); err != nil {
		t.Fatal(err)
	}
	rem := e.mail(alice, 2)
	if rem.Subject != "Re: "+first.Subject {
		t.Errorf("the reminder's subject is %q, want %q", rem.Subject, "Re: "+first.Subject)
	}
	if !strings.Contains(rem.Text, card.ReminderHeading) || !strings.Contains(rem.HTML, card.ReminderHeading) {
		t.Errorf("the reminder does not say it is one:\n%s", rem.Text)
	}
}

// TestAReminderSentAgainIsTheSameMessage: the outbox hands email the
// reminder's delivery (core.DeliveryReminder), and its Message-ID is the
// delivery's: the same reminder mailed again (a retry after an outcome
// the outbox could not know) is the same message, while the next
// reminder is a message of its own. Before, every send of a reminder
// had a Message-ID of its own, so mail clients showed each retry.
func TestAReminderSentAgainIsTheSameMessage(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	remind := func(k int) {
		d := core.Delivery{Kind: core.DeliverRemind, Key: fmt.Sprintf("%s:remind%d:email:%s", q.ID, k, alice),
			Surface: core.SurfaceEmail, Room: alice, QuestionID: q.ID, Route: "ops"}
		if err := e.svc.DeliverOne(t.Context(), e.a, d, nil); err != nil {
			t.Fatal(err)
		}
	}
	remind(1)
	remind(1) // the retry
	remind(2)
	first, again, next := e.mail(alice, 1), e.mail(alice, 2), e.mail(alice, 3)
	if first.MessageID == "" || again.MessageID != first.MessageID {
		t.Errorf("one reminder mailed twice carries Message-IDs %q and %q", first.MessageID, again.MessageID)
	}
	if next.MessageID == first.MessageID {
		t.Errorf("the second reminder carries the first's Message-ID %q", next.MessageID)
	}
}

// TestNoReminderToWhoActedElsewhere: README promises reminders "to
// recipients who have not acted"; carol voted from Slack, so her address
// is not reminded, while dave, who has not acted, is. Before, only a vote
// by email counted, and carol was mailed.
func TestNoReminderToWhoActedElsewhere(t *testing.T) {
	const carolAddr, daveAddr = "carol@example.test", "dave@example.test"
	svc, _ := coretest.Open(t, coretest.Options{
		People: map[string]core.Person{
			"carol": {Name: "carol", IDs: map[core.Surface][]string{core.SurfaceSlack: {"UCAROL"}, core.SurfaceEmail: {carolAddr}}},
			"dave":  {Name: "dave", IDs: map[core.Surface][]string{core.SurfaceEmail: {daveAddr}}},
		},
		Routes: map[string]core.Route{"ops": {
			Rooms:  []core.Room{{Surface: core.SurfaceEmail, ID: "person:carol"}, {Surface: core.SurfaceEmail, ID: "person:dave"}},
			People: []string{"person:carol", "person:dave"},
			Quorum: 2,
		}}})
	fake := emailfake.Start(t, emailfake.Options{})
	host, port, _ := strings.Cut(fake.Addr, ":")
	p, _ := strconv.Atoi(port)
	a, err := email.New(svc, email.Options{Host: host, Port: p, TLS: email.TLSNone, From: "askbridge@bridge.example.test",
		PublicURL: "http://127.0.0.1", Key: []byte(key), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Route: "ops", Tool: "deploy",
		Arguments: []byte(`{}`), Agent: "bot", RunID: "r1", ToolCallID: "c1", Reversibility: core.HardToReverse})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceSlack, ID: "UCAROL"},
		OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	if q, err = svc.Get(t.Context(), q.ID); err != nil || !q.Open() {
		t.Fatalf("after carol's vote: %v, %+v", err, q)
	}
	for _, to := range []string{carolAddr, daveAddr} {
		if err := a.Remind(t.Context(), q, to); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(fake.Mailbox(carolAddr)); n != 0 {
		t.Errorf("carol voted from Slack, yet was mailed %d reminder(s)", n)
	}
	if n := len(fake.Mailbox(daveAddr)); n != 1 {
		t.Errorf("dave, who has not acted, was mailed %d reminder(s), want 1", n)
	}
}
