package email_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/core"
)

// TestASendersIDNDomainMakesASCIIMessageIDs: a sender whose domain is
// not ASCII (an IDN) gets Message-IDs on the domain's ASCII form
// (punycode), and a reminder's In-Reply-To and References name the
// card's, so mail clients thread it under the card. Before, go-mail
// encoded the Message-ID and In-Reply-To headers as encoded words
// (RFC 2047), which a msg-id may not be (RFC 5322, 3.6.4): clients read
// no Message-ID and threaded nothing. A sender's domain given in capitals
// gets the same, lowercase, form, as a resolver would look it up.
func TestASendersIDNDomainMakesASCIIMessageIDs(t *testing.T) {
	for _, from := range []string{"askbridge <askbridge@bücher.example>", "askbridge@BÜCHER.example"} {
		t.Run(from, func(t *testing.T) {
			fake := emailfake.Start(t, emailfake.Options{SMTPUTF8: true}) // the sender's address is not ASCII
			host, port, _ := strings.Cut(fake.Addr, ":")
			p, _ := strconv.Atoi(port)
			svc, a, q := mailer(t, email.Options{Host: host, Port: p, TLS: email.TLSNone, From: from})
			recorded(t, svc, q.ID, outbox(t, svc, a), false)
			d := core.Delivery{Kind: core.DeliverRemind, Key: fmt.Sprintf("%s:remind1:email:%s", q.ID, alice),
				Surface: core.SurfaceEmail, Room: alice, QuestionID: q.ID, Route: "ops"}
			if err := svc.DeliverOne(t.Context(), a, d, nil); err != nil {
				t.Fatal(err)
			}
			box, ok := fake.Wait(alice, 10*time.Second, func(b []emailfake.Message) bool { return len(b) >= 2 })
			if !ok {
				t.Fatalf("%s has %d messages, want the card and its reminder", alice, len(box))
			}
			card, rem := box[0], box[1]
			for _, m := range box {
				raw := m.Header.Get("Message-Id")
				if !strings.HasPrefix(raw, "<"+string(q.ID)+".") || !strings.HasSuffix(raw, "@xn--bcher-kva.example>") {
					t.Errorf("Message-ID %q, want <%s.…@xn--bcher-kva.example>", raw, q.ID)
				}
			}
			if rem.MessageID == card.MessageID {
				t.Errorf("the reminder carries the card's Message-ID %q", card.MessageID)
			}
			want := "<" + card.MessageID + ">"
			if got := rem.Header.Get("In-Reply-To"); got != want {
				t.Errorf("the reminder's In-Reply-To is %q, want %q", got, want)
			}
			if got := rem.Header.Get("References"); got != want {
				t.Errorf("the reminder's References is %q, want %q", got, want)
			}
		})
	}
}

// TestASenderDomainWithNoASCIIFormIsRefusedAtStart: a sender's domain
// that has no ASCII form (IDNA refuses it: an underscore, a label that
// starts with a hyphen) is refused by New, naming the sender, rather
// than mailed under a Message-ID no client reads.
func TestASenderDomainWithNoASCIIFormIsRefusedAtStart(t *testing.T) {
	for _, from := range []string{"askbridge@bär_baz.example", "askbridge <askbridge@-bär.example>"} {
		if err := email.CheckFrom(from); err == nil || !strings.Contains(err.Error(), "sender") {
			t.Errorf("CheckFrom(%q): %v, want the sender refused", from, err)
		}
		_, err := email.New(nil, email.Options{Host: "127.0.0.1", TLS: email.TLSNone, From: from,
			PublicURL: "http://127.0.0.1", Key: []byte(key)})
		if err == nil || !strings.Contains(err.Error(), "sender") || !strings.Contains(err.Error(), "ASCII") {
			t.Errorf("New with the sender %q: %v, want the sender's domain refused", from, err)
		}
	}
	// An ASCII domain, and an address literal, are taken as they are.
	for _, from := range []string{"askbridge@bridge.example.test", "askbridge@[192.0.2.7]"} {
		if err := email.CheckFrom(from); err != nil {
			t.Errorf("CheckFrom(%q): %v", from, err)
		}
	}
}
