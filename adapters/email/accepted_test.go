package email_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// scriptedRelay is an SMTP relay that answers as a test tells it to, for
// what go-mail's own session does around a message: replies are its
// answers to each message's end in turn (the last one repeats), "" for
// hanging up instead of answering; hangUpAt names a command ("RSET",
// "QUIT") at which it hangs up, as a relay restarting, a proxy idling
// out, or a server that drops the line on QUIT without its 221 does.
type scriptedRelay struct {
	host     string
	port     int
	replies  []string
	hangUpAt string

	mu   sync.Mutex
	got  []string // the Message-ID of each message received in full
	took []string // of each message it answered 250
}

func startRelay(t *testing.T, hangUpAt string, replies ...string) *scriptedRelay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &scriptedRelay{replies: replies, hangUpAt: hangUpAt}
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { r.serve(c) })
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	h, p, _ := strings.Cut(ln.Addr().String(), ":")
	r.host = h
	r.port, _ = strconv.Atoi(p)
	return r
}

func (r *scriptedRelay) serve(c net.Conn) {
	defer c.Close()
	in := bufio.NewReader(c)
	say := func(s string) { c.Write([]byte(s + "\r\n")) }
	say("220 relay.example.test ESMTP")
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case r.hangUpAt != "" && strings.HasPrefix(cmd, r.hangUpAt):
			return
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250-relay.example.test")
			say("250 8BITMIME")
		case strings.HasPrefix(cmd, "DATA"):
			say("354 go ahead")
			id := ""
			for {
				l, err := in.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Message-ID") && id == "" {
					id = strings.TrimSpace(v)
				}
			}
			r.mu.Lock()
			r.got = append(r.got, id)
			reply := r.replies[min(len(r.got), len(r.replies))-1]
			if strings.HasPrefix(reply, "250") {
				r.took = append(r.took, id)
			}
			r.mu.Unlock()
			if reply == "" {
				return // the message is in; its answer never comes
			}
			say(reply)
		case strings.HasPrefix(cmd, "QUIT"):
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

// messages are the Message-IDs of the messages the relay received in
// full, and of those it took.
func (r *scriptedRelay) messages() (got, took []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got), slices.Clone(r.took)
}

// relayEnv is mailer with an adapter mailing through relay r.
func relayEnv(t *testing.T, r *scriptedRelay) (*core.Service, *email.Adapter, *core.Question) {
	t.Helper()
	return mailer(t, email.Options{Host: r.host, Port: r.port, TLS: email.TLSNone, Timeout: 5 * time.Second})
}

// outbox runs the email outbox of svc through a until the test ends,
// handing every failed attempt to the returned channel.
func outbox(t *testing.T, svc *core.Service, a *email.Adapter) <-chan error {
	errs := make(chan error, 100)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		loops.Deliver(ctx, svc, a, loops.DeliverOptions{Block: 20 * time.Millisecond, MinIdle: time.Second, RetryWait: 5 * time.Millisecond,
			MaxAttempts: 4, OnError: func(_ core.Delivery, err error) { errs <- err }})
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return errs
}

// recorded waits until q's card is recorded, failing at the first failed
// attempt unless retries is set.
func recorded(t *testing.T, svc *core.Service, id core.QuestionID, errs <-chan error, retries bool) *core.Question {
	t.Helper()
	w, err := svc.Watch(id)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	guard := time.After(10 * time.Second)
	for {
		q, err := w.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Messages) > 0 {
			return q
		}
		select {
		case <-w.Changed():
		case err := <-errs:
			if !retries {
				t.Fatalf("the mail was reported failed: %v", err)
			}
		case <-guard:
			t.Fatal("the mail was never recorded")
		}
	}
}

// TestAMessageTheRelayTookIsSent: once the relay has answered 250 to the
// message, the mail is sent, whatever becomes of the session after it:
// the relay hanging up at the RSET go-mail sends next, or at the QUIT.
// Before, the first was reported not sent and the second of unknown
// outcome, and each retry was taken again: alice got four copies and
// the question's log said "undelivered".
func TestAMessageTheRelayTookIsSent(t *testing.T) {
	for _, at := range []string{"RSET", "QUIT"} {
		t.Run(at, func(t *testing.T) {
			r := startRelay(t, at, "250 2.0.0 queued as 1")
			svc, a, q := relayEnv(t, r)
			ref, err := a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceEmail, Room: alice, Delivery: "probe"})
			if err != nil || ref.ID == "" {
				t.Fatalf("Post of a message the relay took: %v (id %q)", err, ref.ID)
			}
			q = recorded(t, svc, q.ID, outbox(t, svc, a), false)
			if got, took := r.messages(); len(got) != 2 || len(took) != 2 {
				t.Fatalf("the relay got %d messages and took %d, want 2 (the probe and the outbox's one)", len(got), len(took))
			}
			evs := coretest.EventsOf(t, svc, q.ID)
			if count(evs, core.EventNotified) != 1 || count(evs, core.EventUndelivered) != 0 {
				t.Fatalf("events %v", coretest.Kinds(evs))
			}
		})
	}
}

// TestTheRelaysAnswerToTheMessageDecides: the relay's answer to the
// message's end says what became of it: a refusal is given up on (5xx)
// or deferred, not sent (4xx: TestATemporaryRefusalIsNoFailedAttempt),
// and no answer at all (the line dropped after the message went) leaves
// it unknown, so the error is neither. Before, a drop there was reported
// not sent, so the outbox's retry counted as no repeat.
func TestTheRelaysAnswerToTheMessageDecides(t *testing.T) {
	for _, c := range []struct {
		reply string
		want  string
	}{{"", "unknown"}, {"451 4.3.0 try later", "deferred"}, {"554 5.7.1 refused", "permanent"}} {
		t.Run(c.want, func(t *testing.T) {
			r := startRelay(t, "", c.reply)
			_, a, q := relayEnv(t, r)
			_, err := a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceEmail, Room: alice, Delivery: "probe"})
			var ns *core.NotSent
			var perm *core.Permanent
			var ra *core.RetryAfter
			got := "unknown"
			switch {
			case err == nil:
				got = "sent"
			case errors.As(err, &perm):
				got = "permanent"
			case errors.As(err, &ra):
				got = "deferred"
			case errors.As(err, &ns):
				got = "not sent"
			}
			if got != c.want {
				t.Fatalf("answered %q: the send is %s (%v), want %s", c.reply, got, err, c.want)
			}
		})
	}
}

// TestAMailOfUnknownOutcomeIsMailedAgainAsTheSameMessage: the outbox
// mails a message whose outcome it could not know again, flagged as a
// possible repeat and with the same Message-ID, so that mail clients
// show it once.
func TestAMailOfUnknownOutcomeIsMailedAgainAsTheSameMessage(t *testing.T) {
	r := startRelay(t, "", "", "250 2.0.0 queued as 2")
	svc, a, q := relayEnv(t, r)
	q = recorded(t, svc, q.ID, outbox(t, svc, a), true)
	got, took := r.messages()
	if len(got) != 2 || len(took) != 1 || got[0] != got[1] || got[0] == "" {
		t.Fatalf("the relay got %q and took %q: want the same message twice", got, took)
	}
	if !q.Messages[0].Repeat {
		t.Fatal("the mail sent again is not marked as a possible repeat")
	}
}
