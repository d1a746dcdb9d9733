package email_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestTwoRoutesDigestsAreTwoMessages: after a downtime every route that
// mails alice sends her its own "while you were away" digest, for the
// same period. Each is a message of its own, with a Message-ID of its
// own (RFC 5322 3.6.4: one per message; Gmail keeps one message per
// Message-ID), while the same digest mailed again (a retry after an
// outcome the outbox could not know) is the same message. Before, the
// Message-ID was the room's and the period's alone, so the second
// route's digest read as a copy of the first.
func TestTwoRoutesDigestsAreTwoMessages(t *testing.T) {
	route := core.Route{Rooms: []core.Room{{Surface: core.SurfaceEmail, ID: alice}},
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}}
	svc, _ := coretest.Open(t, coretest.Options{Routes: map[string]core.Route{"ops": route, "db": route}})
	fake := emailfake.Start(t, emailfake.Options{})
	host, port, _ := strings.Cut(fake.Addr, ":")
	p, _ := strconv.Atoi(port)
	a, err := email.New(svc, email.Options{Host: host, Port: p, TLS: email.TLSNone, From: "askbridge@bridge.example.test",
		PublicURL: "http://127.0.0.1", Key: []byte(key), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Hour)
	for _, r := range []string{"ops", "db"} {
		if _, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Text: "Asked on " + r + "?", Route: r,
			Agent: "deploy-bot", RunID: "run-1", Reversibility: core.HardToReverse}); err != nil {
			t.Fatal(err)
		}
	}
	until := time.Now().Add(time.Second)
	for _, r := range []string{"ops", "db", "ops"} { // ops again: the retry
		d, err := svc.Digest(t.Context(), core.DigestQuery{From: since, To: until, Route: r})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Digest(t.Context(), d, alice); err != nil {
			t.Fatal(err)
		}
	}
	box, ok := fake.Wait(alice, 10*time.Second, func(b []emailfake.Message) bool { return len(b) >= 3 })
	if !ok {
		t.Fatalf("alice has %d messages, want 3", len(box))
	}
	ops, db, again := box[0], box[1], box[2]
	if !strings.Contains(ops.Text, "Asked on ops?") || !strings.Contains(db.Text, "Asked on db?") {
		t.Fatalf("the digests are not each route's:\n%s\n\n%s", ops.Text, db.Text)
	}
	if ops.MessageID == "" || db.MessageID == ops.MessageID {
		t.Errorf("two routes' digests carry one Message-ID %q", ops.MessageID)
	}
	if again.MessageID != ops.MessageID {
		t.Errorf("one digest mailed twice carries Message-IDs %q and %q", ops.MessageID, again.MessageID)
	}
}

// moreNotListed ends a digest's list that stopped at core's cap.
var moreNotListed = card.DigestNotListed(0, true)

// TestADigestNeverPassesACapOffAsACount: a digest's lists stop at core's
// cap, and say so (core.Digest's AskedMore, ClosedMore, OpenMore): the
// email says "or more" beside each count that is only a floor, and that
// a list it cut may go on. Before, it gave the cap as the count, "500
// still open" after a downtime that left more.
func TestADigestNeverPassesACapOffAsACount(t *testing.T) {
	capped := adaptertest.CappedDigest()
	m, err := email.RenderDigest(capped, false)
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.CheckCappedDigest(t, m.Text)
	adaptertest.CheckCappedDigest(t, m.HTML)
	// A whole list says nothing of more.
	capped.AskedMore, capped.OpenMore = false, false
	m, err = email.RenderDigest(capped, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.Text, "or more") || strings.Contains(m.Text, moreNotListed) {
		t.Errorf("a whole digest says there may be more:\n%s", m.Text)
	}
}
