package chat

import (
	"html"
	"net/http"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/core"
)

// link is the URL u acts with for b: from c when c is u's own copy,
// else from u's own copy of the question; a user who was sent none can
// only use c's, as one forwarded to them.
func (d *onewayDriver) link(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	r, err := core.DecodeRef(b.Value)
	if err != nil {
		t.Fatalf("button %+v carries no ref", b)
	}
	rooms := append([]string{c.Room}, d.ownRooms(t, r.QuestionID, u)...)
	var fallback string
	for _, room := range rooms {
		c, ok := d.cardNow(t, r.QuestionID, room)
		if !ok {
			continue
		}
		for _, x := range c.Buttons {
			if x.Value == b.Value {
				u2 := d.urlOf(t, c, x)
				if email.Recipient(room) == u.ID {
					return u2
				}
				fallback = u2
			}
		}
	}
	// A person who may not answer is shown no choice on opening their
	// own copy (its page refuses them at once, recording nothing), but
	// the links their message carries still reach the door, which
	// refuses them and records it: act on theirs, not another's.
	if u2, ok := d.ownSentURL(t, r.QuestionID, u, b.Value); ok {
		return u2
	}
	if fallback == "" {
		// The choice is gone from every copy (the question closed): act
		// on the link as it was sent.
		for _, s := range d.inbox(email.Recipient(c.Room)) {
			if s.id == c.ID {
				return d.sentURL(t, s, b.Value)
			}
		}
		t.Fatalf("no link for %+v", b)
	}
	return fallback
}

// ownRooms are the rooms u's own copies of question id were sent to,
// waiting for them when the question's route sends u one: copies go out
// one by one, and nobody acts on another's.
func (d *onewayDriver) ownRooms(t *testing.T, id core.QuestionID, u adaptertest.User) []string {
	t.Helper()
	w, err := d.main.Service.Watch(id)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	timeout := time.After(15 * time.Second)
	for {
		q, err := w.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var rooms []string
		for _, m := range q.Messages {
			if m.Surface == d.surface && email.Recipient(m.Room) == u.ID {
				rooms = append(rooms, m.Room)
			}
		}
		sentTo := false
		for _, room := range d.settings.File.Routes[q.Route].Rooms {
			sentTo = sentTo || room.ID == u.ID
		}
		if len(rooms) > 0 || !sentTo || !q.Open() {
			return rooms // a question closed first is sent to nobody more
		}
		select {
		case <-w.Changed():
		case <-timeout:
			t.Fatalf("%s's copy of %s was never sent", u.ID, id)
		}
	}
}

// urlOf is the link behind button x of card c (as cardNow built it).
// ownSentURL is the link for ref in the message u was sent of question
// id (email: in the message; ntfy: one of the notification's actions).
func (d *onewayDriver) ownSentURL(t *testing.T, id core.QuestionID, u adaptertest.User, ref string) (string, bool) {
	t.Helper()
	q, err := d.main.Service.Get(t.Context(), id)
	if err != nil {
		return "", false
	}
	for _, m := range q.Messages {
		if m.Surface != d.surface || email.Recipient(m.Room) != u.ID {
			continue
		}
		for _, s := range d.inbox(u.ID) {
			if s.id == m.ID {
				if link, ok := s.urls[ref]; ok {
					return link, true
				}
			}
		}
	}
	return "", false
}

func (d *onewayDriver) urlOf(t *testing.T, c adaptertest.Card, x adaptertest.Button) string {
	for _, s := range d.inbox(email.Recipient(c.Room)) {
		if s.id == c.ID {
			return d.sentURL(t, s, x.Value)
		}
	}
	t.Fatalf("no message %s", c.ID)
	return ""
}

// sentURL finds ref's link in message s: in the message itself (email),
// or on the page of every choice it opens (ntfy), which lists them while
// the question is open.
func (d *onewayDriver) sentURL(t *testing.T, s sent, ref string) string {
	if u, ok := s.urls[ref]; ok {
		return u
	}
	if s.click != "" {
		_, body := d.fetch(t, http.MethodGet, s.click, nil)
		for _, a := range anchor.FindAllStringSubmatch(body, -1) {
			if u := resolveHref(s.click, html.UnescapeString(a[1])); d.refOf(u) == ref {
				return u
			}
		}
		// Closed: any link of the question shows how it ended, and acts
		// as a late click; sign-free, the menu itself says so.
		return s.click
	}
	t.Fatalf("message %s has no link for %s", s.id, ref)
	return ""
}
