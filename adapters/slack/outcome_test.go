package slack_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestErrorsThatMayHavePostedAreUnknown: Slack documents internal_error
// and fatal_error as "it's possible some aspect of the operation
// succeeded", so a post that got one may be in the channel: its retry
// must be flagged as a possible repeat (law 4), not taken for a first
// post. Errors about the token, or a message Slack can never take, are
// permanent; any other refusal posted nothing.
func TestErrorsThatMayHavePostedAreUnknown(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(decision())
	e.card(q.ID)
	q = e.get(q.ID)
	for code, want := range map[string]string{
		"internal_error":   "unknown",
		"fatal_error":      "unknown",
		"invalid_auth":     "permanent",
		"account_inactive": "permanent",
		"token_revoked":    "permanent",
		"not_authed":       "permanent",
		"missing_scope":    "permanent",
		"no_permission":    "permanent",
		"token_expired":    "permanent",
		"msg_too_long":     "permanent",
		"no_text":          "not sent",
	} {
		e.fake.FailNext("chat.postMessage", slackfake.Failure{Error: code})
		_, err := e.a.Post(t.Context(), q, core.MessageRef{Room: "C0OTHER", Kind: core.DeliverPost})
		if got := adaptertest.Outcome(err); got != want || !strings.Contains(err.Error(), code) {
			t.Errorf("post answered %s: %s (%v); want %s", code, got, err, want)
		}
		e.fake.FailNext("chat.postMessage", slackfake.Failure{Error: code})
		if got := adaptertest.Outcome(e.a.Remind(t.Context(), q, "C0OTHER")); got != want {
			t.Errorf("reminder answered %s: %s; want %s", code, got, want)
		}
	}
}

// TestDMReminderThreadsUnderTheDMCard: a person's DM card is recorded
// under the D… channel Slack opened, while the reminder's room is core's
// DM room of the person ("@U…"); the reminder still goes in the card's
// thread.
func TestDMReminderThreadsUnderTheDMCard(t *testing.T) {
	e := newEnvPeople(t, false, nil, map[string]core.Person{
		"alice": {Name: "alice", IDs: map[core.Surface][]string{core.SurfaceSlack: {alice.ID}}, DM: true},
	}, nil)
	q := e.ask(decision())
	dm := e.dmCard(q.ID)
	q = e.get(q.ID)
	if err := e.a.Remind(t.Context(), q, core.DMRoom(alice.ID)); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, m := range e.fake.Messages() {
		if strings.Contains(m.PlainText(), card.ReminderHeading) {
			found = true
			if m.Channel != dm.Room || m.ThreadTS != dm.ID {
				t.Errorf("the DM reminder went to %s thread %q; want the card's thread %s %s", m.Channel, m.ThreadTS, dm.Room, dm.ID)
			}
		}
	}
	if !found {
		t.Fatal("no reminder posted")
	}
}

// TestDigestSaysItsCountsAreFloors: a digest whose lists core stopped at
// its cap says "N or more" and that more may be left out; before, it gave
// the floor as the count.
func TestDigestSaysItsCountsAreFloors(t *testing.T) {
	m := slack.Digest(adaptertest.CappedDigest())
	b, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.CheckCappedDigest(t, string(b))
	if !strings.Contains(m.Text, card.DigestCount(3, true)) {
		t.Errorf("the notification text %q gives a floor as the count", m.Text)
	}
}
