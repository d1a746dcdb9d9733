package email_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
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
