package slack_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
)

// TestClickAckedWhileNotesWait: a click is acknowledged once core has
// stored it, however many other clicks' private notes still wait to go
// out. Slack holds every chat.postEphemeral unanswered while one person
// clicks on 60 cards, more than a note queue held before (32 each): every
// click is still answered 200 (before, the 34th waited for room in the
// queue, up to a minute), and once Slack answers again all 60 notes
// arrive.
func TestClickAckedWhileNotesWait(t *testing.T) {
	e := newEnv(t, false)
	const clicks = 60
	ids := make([]core.QuestionID, clicks)
	cards := make([]slackfake.Message, clicks)
	for i := range cards {
		ids[i] = e.ask(decision()).ID
		cards[i] = e.card(ids[i])
	}
	release := e.fake.Hold("chat.postEphemeral")
	defer release()
	for i, card := range cards {
		ctx, cancel := context.WithTimeout(t.Context(), wait)
		status, _, err := slackfake.Click(e.srv.URL+slack.InteractivityPath, secret,
			slackfake.ClickPayload(alice, card, button(t, card, core.RefOption, -1, 0))).Send(ctx)
		cancel()
		if err != nil || status != http.StatusOK {
			t.Fatalf("click %d, while %d notes wait: %d, %v", i, i, status, err)
		}
	}
	for _, id := range ids {
		if q := e.get(id); q.State != core.StateAnswered {
			t.Fatalf("question %s is %s after its click was acknowledged", id, q.State)
		}
	}
	release()
	e.until(fmt.Sprintf("%d notes", clicks), func() bool { return e.notesTo(alice) >= clicks })
}

// TestBurstOfClicksGetsEveryNote: more clicks, from as many people,
// arrive at once than the note senders can send as they come; every
// clicker still gets a private note.
func TestBurstOfClicksGetsEveryNote(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(decision())
	card := e.card(q.ID)
	b := button(t, card, core.RefOption, -1, 0)
	const clicks = 400
	// Each note takes Slack 20 ms: the clicks come faster than one sender
	// could send their notes.
	e.fake.SetLatency("chat.postEphemeral", 20*time.Millisecond)
	var wg sync.WaitGroup
	strangers := make([]slackfake.User, clicks)
	for i := range strangers {
		strangers[i] = slackfake.User{ID: fmt.Sprintf("U0STRANGER%03d", i), Name: "Stranger"}
		e.fake.AddUser(strangers[i])
	}
	for _, u := range strangers {
		wg.Go(func() {
			status, _, err := slackfake.Click(e.srv.URL+slack.InteractivityPath, secret, slackfake.ClickPayload(u, card, b)).Send(t.Context())
			if err != nil || status != http.StatusOK {
				t.Errorf("click: %d %v", status, err)
			}
		})
	}
	wg.Wait()
	// At least clicks × 20 ms ÷ 8 senders (one second) of sending: on a
	// loaded machine (a load average of 26 once) the package's usual wait
	// was too short, so this one waits up to a minute. What it checks is
	// that every note comes, not how soon.
	if !e.fake.WaitFor(time.Minute, func() bool { return len(e.fake.Ephemerals()) >= clicks }) {
		t.Fatalf("timed out waiting for %d notes: %d came", clicks, len(e.fake.Ephemerals()))
	}
	for _, u := range strangers {
		if n := e.notesTo(u); n != 1 {
			t.Fatalf("%s got %d notes for one click", u.ID, n)
		}
	}
}

// TestRateLimitedNoteWaitsAndIsSent: Slack answers a chat.postEphemeral
// with 429 Retry-After: 1 while a second note of the same person waits
// behind it. Both notes arrive, in order, after the wait: before, the
// first was dropped on the 429 and the second sent straight on.
func TestRateLimitedNoteWaitsAndIsSent(t *testing.T) {
	e := notesBehind429(t, 1)
	if n0, n1 := e.note(alice, 0), e.note(alice, 1); !strings.Contains(n0, "PostgreSQL") || !strings.Contains(n1, "DynamoDB") {
		t.Fatalf("notes after the 429, in order: %q, %q", n0, n1)
	}
	if n := e.fake.Calls("chat.postEphemeral"); n != 3 {
		t.Fatalf("chat.postEphemeral called %d times, want 3 (the 429, its retry, the second note)", n)
	}
}

// TestANoteSlackHoldsForMinutesIsDropped: a 429 asking to wait longer
// than a note is worth (Retry-After: 120) drops that note, and the
// person's next note goes at once. Before, the queue waited whatever
// Slack asked, up to an hour, and every later note of the person with
// it.
func TestANoteSlackHoldsForMinutesIsDropped(t *testing.T) {
	e := notesBehind429(t, 120)
	if n0 := e.note(alice, 0); !strings.Contains(n0, "DynamoDB") {
		t.Fatalf("the note after the one Slack held for two minutes: %q", n0)
	}
	if n := e.fake.Calls("chat.postEphemeral"); n != 2 {
		t.Fatalf("chat.postEphemeral called %d times, want 2 (the 429, then the second note)", n)
	}
}

// notesBehind429 clicks two of alice's cards while Slack's next
// chat.postEphemeral answers 429 with Retry-After: retryAfter seconds,
// so her second note waits behind the first, and returns the env.
func notesBehind429(t *testing.T, retryAfter int) *env {
	t.Helper()
	e := newEnv(t, false)
	first, second := e.ask(decision()), e.ask(decision())
	c1, c2 := e.card(first.ID), e.card(second.ID)
	e.fake.FailNext("chat.postEphemeral", slackfake.Failure{RetryAfter: retryAfter})
	release := e.fake.Hold("chat.postEphemeral")
	defer release()
	if st := e.click(alice, c1, button(t, c1, core.RefOption, -1, 0)); st != http.StatusOK {
		t.Fatalf("first click: %d", st)
	}
	if st := e.click(alice, c2, button(t, c2, core.RefOption, -1, 1)); st != http.StatusOK {
		t.Fatalf("second click: %d", st)
	}
	return e
}
