package email_test

import (
	"errors"
	"net/mail"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/core"
)

// TestAnAddressBeyondASCIINeedsSMTPUTF8: mail to an address that is not
// ASCII goes to a relay that offers SMTPUTF8, declared in its MAIL
// command (RFC 6531); a relay that does not offer it is sent nothing,
// and the delivery is given up on at once, saying why. A name beyond
// ASCII needs nothing of the relay: it is encoded. Before, the address
// went to such a relay undeclared, which the RFC forbids: a relay that
// keeps to it refuses the mail, one that does not passes on an address
// the next server may mangle.
func TestAnAddressBeyondASCIINeedsSMTPUTF8(t *testing.T) {
	const jose = "josé@example.test"
	relay := func(o emailfake.Options) (*emailfake.Server, email.Options) {
		fake := emailfake.Start(t, o)
		host, port, _ := strings.Cut(fake.Addr, ":")
		p, _ := strconv.Atoi(port)
		return fake, email.Options{Host: host, Port: p, TLS: email.TLSNone}
	}
	post := func(a *email.Adapter, q *core.Question, to string) error {
		_, err := a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceEmail, Room: to, Delivery: "d-" + to})
		return err
	}

	plain, o := relay(emailfake.Options{})
	svc, a, q := mailer(t, o)
	err := post(a, q, jose)
	var perm *core.Permanent
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), "SMTPUTF8") {
		t.Fatalf("to %s through a relay without SMTPUTF8: %v (%T), want a refusal for good naming SMTPUTF8", jose, err, err)
	}
	if n := len(plain.Mailbox(jose)); n != 0 {
		t.Fatalf("the relay without SMTPUTF8 was sent %d messages to %s", n, jose)
	}
	// An ASCII address through the same relay is no business of it,
	// whatever the names: a sender's name beyond ASCII is encoded.
	o.From, o.PublicURL, o.Key = "Åsa Brücke <askbridge@bridge.example.test>", "http://127.0.0.1", []byte(key)
	named, err := email.New(svc, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := post(named, q, alice); err != nil {
		t.Fatalf("to %s through the same relay: %v", alice, err)
	}
	box := plain.Mailbox(alice)
	if len(box) != 1 {
		t.Fatalf("%s has %d messages", alice, len(box))
	}
	if from, err := mail.ParseAddress(box[0].Header.Get("From")); err != nil || from.Name != "Åsa Brücke" || box[0].UTF8 {
		t.Fatalf("From %q (%v), SMTPUTF8 declared: %v", box[0].Header.Get("From"), err, box[0].UTF8)
	}

	utf8, o := relay(emailfake.Options{SMTPUTF8: true})
	_, a, q = mailer(t, o)
	if err := post(a, q, jose); err != nil {
		t.Fatalf("to %s through a relay with SMTPUTF8: %v", jose, err)
	}
	if box := utf8.Mailbox(jose); len(box) != 1 || !box[0].UTF8 {
		t.Fatalf("to %s: %d messages, SMTPUTF8 declared: %v", jose, len(box), len(box) == 1 && box[0].UTF8)
	}
}
