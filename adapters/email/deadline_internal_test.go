package email

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/wneessen/go-mail/smtp"
)

// TestGoMailCannotMoveTheSessionsDeadlineOn: before the message go-mail
// checks the connection and moves its deadline to Timeout from then
// (smtp.Client.UpdateDeadline), which gave the message and the QUIT a
// Timeout of their own past the session's: a relay that went silent there
// held the send for up to twice Timeout. The session's connection keeps
// every deadline within the session's. Here the relay greets, go-mail
// moves the deadline an hour on, and the relay never answers the NOOP:
// the NOOP fails at the session's deadline.
func TestGoMailCannotMoveTheSessionsDeadlineOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "220 relay.example.test ESMTP\r\n")
		io.Copy(io.Discard, c) // and never a word more
	}()
	s := &session{ctx: t.Context(), addr: ln.Addr().String(), deadline: time.Now().Add(2 * time.Second)}
	defer s.end()
	conn, err := s.dial(t.Context(), "tcp", "")
	if err != nil {
		t.Fatal(err)
	}
	client, err := smtp.NewClient(conn, "relay.example.test")
	if err != nil {
		t.Fatal(err)
	}
	if err := client.UpdateDeadline(time.Hour); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- client.Noop() }()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the NOOP ended with %v, want the session's deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the NOOP outlived the session's deadline: go-mail moved it on")
	}
}
