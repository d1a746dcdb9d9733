package email_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// silentRelay accepts connections and stops answering, as a tarpit or a
// load balancer with no backend does: at once, or, with greet, after its
// greeting and the client's EHLO. Each connection is announced on the
// channel once the relay has gone silent on it.
func silentRelay(t *testing.T, greet bool) (host string, port int, silent <-chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acc := make(chan struct{}, 100)
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
			go func() {
				if greet {
					io.WriteString(c, "220 relay.example.test ESMTP\r\n")
					if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
						return
					}
				}
				acc <- struct{}{}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	h, p, _ := strings.Cut(ln.Addr().String(), ":")
	port, _ = strconv.Atoi(p)
	return h, port, acc
}

// post sends one card through an adapter for host:port in the background.
func post(t *testing.T, ctx context.Context, o email.Options) <-chan error {
	_, a, q := mailer(t, o)
	done := make(chan error, 1)
	go func() {
		_, err := a.Post(ctx, q, core.MessageRef{Surface: core.SurfaceEmail, Room: alice, Delivery: "d1"})
		done <- err
	}()
	return done
}

// mailer is a core with one email recipient, alice, an adapter of
// options o (with the test's public URL and key, and its sender unless o
// names one), and a question asked of alice.
func mailer(t *testing.T, o email.Options) (*core.Service, *email.Adapter, *core.Question) {
	t.Helper()
	svc, _ := coretest.Open(t, coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceEmail, ID: alice}},
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
	}}})
	if o.From == "" {
		o.From = "askbridge@bridge.example.test"
	}
	o.PublicURL, o.Key, o.Log = "http://127.0.0.1", []byte(key), zerolog.Nop()
	a, err := email.New(svc, o)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Text: "Which region?", Route: "ops",
		Agent: "deploy-bot", RunID: "run-1", Reversibility: core.HardToReverse})
	if err != nil {
		t.Fatal(err)
	}
	return svc, a, q
}

// wantNotSent waits for a send whose relay went silent before the message:
// it must end, as not sent (so the outbox retries it).
func wantNotSent(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		var ns *core.NotSent
		if !errors.As(err, &ns) {
			t.Fatalf("the send ended with %v, want not sent", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the send is still waiting for the relay")
	}
}

// A relay that accepts and never greets, or stops answering after its
// greeting, fails the send once Timeout has passed, whatever the TLS
// mode, even when the delivery's context has no deadline.
func TestASilentRelayTimesOut(t *testing.T) {
	for _, c := range []struct {
		mode  string
		greet bool
	}{{email.TLSNone, false}, {email.TLSStartTLS, false}, {email.TLSImplicit, false}, {email.TLSNone, true}, {email.TLSStartTLS, true}} {
		t.Run(c.mode+"/greets="+strconv.FormatBool(c.greet), func(t *testing.T) {
			t.Parallel()
			host, port, _ := silentRelay(t, c.greet)
			wantNotSent(t, post(t, context.Background(), email.Options{Host: host, Port: port, TLS: c.mode, Timeout: 300 * time.Millisecond}))
		})
	}
}

// The delivery's context ending (a stop) ends its send at once, however
// long Timeout is: here while it waits for an answer to EHLO, past the
// dial, which go-mail alone bounds by the context.
func TestTheContextEndsASend(t *testing.T) {
	host, port, silent := silentRelay(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := post(t, ctx, email.Options{Host: host, Port: port, TLS: email.TLSNone, Timeout: time.Hour})
	select {
	case <-silent:
	case <-time.After(10 * time.Second):
		t.Fatal("the relay never got the EHLO")
	}
	cancel()
	wantNotSent(t, done)
}
