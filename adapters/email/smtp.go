package email

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/textproto"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	gomail "github.com/wneessen/go-mail"

	"github.com/askbridge/askbridge/core"
)

// send mails msg to one recipient over one SMTP session.
func (a *Adapter) send(ctx context.Context, to, id, inReplyTo string, msg Message) error {
	m := gomail.NewMsg()
	m.FromMailAddress(a.from)
	if err := m.To(to); err != nil {
		return &core.Permanent{Err: fmt.Errorf("recipient %q: %w", to, err)}
	}
	m.Subject(subjectHeader(msg.Subject))
	m.SetMessageIDWithValue(id)
	m.SetDate()
	if inReplyTo != "" {
		m.SetGenHeader(gomail.HeaderInReplyTo, "<"+inReplyTo+">")
		m.SetGenHeader(gomail.HeaderReferences, "<"+inReplyTo+">")
	}
	// An automatic message: auto-responders should not answer it.
	m.SetGenHeader("Auto-Submitted", "auto-generated")
	m.SetGenHeader(gomail.HeaderXAutoResponseSuppress, "All")
	m.SetBodyString(gomail.TypeTextPlain, msg.Text)
	m.AddAlternativeString(gomail.TypeTextHTML, msg.HTML)
	s := &session{ctx: ctx, addr: a.addr, deadline: time.Now().Add(a.opts.Timeout), tls: a.tls}
	defer s.end()
	// The connection is dialled before go-mail is given it, so that the
	// EHLO can name the connection's own address (heloFor).
	dctx, cancel := context.WithDeadline(ctx, s.deadline)
	raw, err := s.dial(dctx, "tcp", a.addr)
	cancel()
	if err != nil {
		return &core.NotSent{Err: fmt.Errorf("dial failed: %w", err)}
	}
	client, err := a.client(handOver(raw), heloFor(a.helo, raw))
	if err != nil {
		return err
	}
	// The session in its three steps, each judged on its own, not go-mail's
	// DialAndSend, whose one error also covers the RSET and QUIT it sends
	// after the relay took the message: a failure of either mailed it
	// again, up to the outbox's last attempt, then called it undelivered.
	conn, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		err = fmt.Errorf("dial failed: %w", err)
		// A 4xx at the greeting, STARTTLS or AUTH (too many connections,
		// a login failing for now) is a refusal for now, as at the message.
		if te, ok := errors.AsType[*textproto.Error](err); ok && te.Code/100 == 4 {
			return a.deferred(err)
		}
		return &core.NotSent{Err: err}
	}
	if whose := needsUTF8(a.from.Address, to); whose != "" {
		if has, _ := conn.Extension("SMTPUTF8"); !has {
			_ = client.CloseWithSMTPClient(conn)
			return &core.Permanent{Err: fmt.Errorf("the %s address is not ASCII, which the relay %s cannot carry: it does not offer SMTPUTF8 (RFC 6531)", whose, a.opts.Host)}
		}
	}
	err = a.classify(client.SendWithSMTPClient(conn, m))
	// The QUIT changes nothing of what became of the message: a relay
	// that hangs up without its 221 has the mail all the same.
	_ = client.CloseWithSMTPClient(conn)
	return err
}

// maxWordBytes is the most text one encoded word of subjectHeader
// carries: "=?UTF-8?b?", its base64 and "?=" stay within the 75
// characters RFC 2047 (2) allows a word.
const maxWordBytes = 45

// subjectHeader is the subject as go-mail is given it. go-mail encodes
// a subject that is not ASCII and leaves an ASCII one as it is, but mail
// clients decode every "=?...?=" they find in it (RFC 2047), so an
// agent's text "=?UTF-8?Q?...=0D=0A...?=" was shown as other words, a
// line break and all where the subject had been made one line
// (textlimit.OneLine). A subject holding "=?" is therefore encoded here,
// whole, in words of base64 that clients decode back to the text as
// written and that go-mail leaves alone (they are ASCII) and folds
// between; any other is go-mail's to encode.
func subjectHeader(s string) string {
	if !strings.Contains(s, "=?") {
		return s
	}
	var words []string
	for s != "" {
		n := 0
		for n < len(s) {
			_, size := utf8.DecodeRuneInString(s[n:])
			if n+size > maxWordBytes {
				break
			}
			n += size
		}
		words = append(words, "=?UTF-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, " ")
}

// client is a go-mail client with the adapter's options, dialling with
// dial (nil: go-mail's own), whose EHLO names helo ("": go-mail's
// default, the machine's bare name).
func (a *Adapter) client(dial gomail.DialContextFunc, helo string) (*gomail.Client, error) {
	copts := slices.Clip(a.copts)
	if dial != nil {
		copts = append(copts, gomail.WithDialContextFunc(dial))
	}
	if helo != "" {
		copts = append(copts, gomail.WithHELO(helo))
	}
	return gomail.NewClient(a.opts.Host, copts...)
}

// handOver is go-mail's dialler of a session whose connection is dialled
// already: it hands conn over, once.
func handOver(conn net.Conn) gomail.DialContextFunc {
	var given atomic.Bool
	return func(context.Context, string, string) (net.Conn, error) {
		if given.Swap(true) {
			return nil, errors.New("the session's connection was handed over already")
		}
		return conn, nil
	}
}

// needsUTF8 names which of the sender's address and the recipient's
// (each an address or "Name <address>") is not ASCII, "" when neither
// is: one a relay may be sent only when it offers SMTPUTF8, in the MAIL
// command's SMTPUTF8 parameter, which go-mail then sends (RFC 6531). A
// name that is not ASCII needs nothing: go-mail encodes it (RFC 2047).
// The address itself is not named: the error reaches the event log.
func needsUTF8(from, to string) string {
	for _, c := range []struct{ whose, addr string }{{"sender's", from}, {"recipient's", to}} {
		addr := c.addr
		if p, err := mail.ParseAddress(addr); err == nil {
			addr = p.Address
		}
		if !ascii(addr) {
			return c.whose
		}
	}
	return ""
}

// session is the connection of one SMTP session. go-mail bounds only its
// dial, by Timeout and the context: the greeting, EHLO, STARTTLS, AUTH
// and the message run with no deadline, so a relay that accepted and
// never answered would hold the send, its room's delivery and a place in
// the outbox for good, and a stop would wait on it. So the connection
// carries the session's deadline, which go-mail cannot move on
// (boundConn), and is closed when the delivery's context ends, and in
// any case when the send returns (go-mail leaves it open when a step
// fails).
type session struct {
	ctx context.Context // the delivery's
	// addr is the relay's host and port, joined as an IPv6 address needs
	// (net.JoinHostPort): go-mail joins them with a colon alone
	// (Client.ServerAddr), which no dialler reads for one.
	addr     string
	deadline time.Time
	tls      *tls.Config // implicit TLS, or nil
	ends     []func()
}

// dial is go-mail's DialContextFunc. Its ctx is go-mail's for setting
// the session up, cancelled once AUTH is done, so it is not what closes
// the connection. It dials the session's address, not go-mail's.
func (s *session) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, network, s.addr)
	if err != nil {
		return nil, err
	}
	conn := &boundConn{Conn: raw, deadline: s.deadline}
	if err := conn.SetDeadline(s.deadline); err != nil {
		conn.Close()
		return nil, err
	}
	stop := context.AfterFunc(s.ctx, func() { conn.Close() })
	s.ends = append(s.ends, func() { stop(); conn.Close() })
	if s.tls == nil {
		return conn, nil
	}
	tc := tls.Client(conn, s.tls)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// boundConn is the session's connection, whose deadlines never pass the
// session's: before the message go-mail moves the deadline to Timeout
// from then (its connection check), which gave the message and the QUIT
// a Timeout of their own, and a relay silent there held the send for up
// to twice Timeout. TLS on it (STARTTLS, implicit) sets its deadlines
// here too.
type boundConn struct {
	net.Conn
	deadline time.Time
}

func (c *boundConn) SetDeadline(t time.Time) error      { return c.Conn.SetDeadline(c.bound(t)) }
func (c *boundConn) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(c.bound(t)) }
func (c *boundConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.bound(t)) }

// bound is t, or the session's deadline when t is later or none.
func (c *boundConn) bound(t time.Time) time.Time {
	if t.IsZero() || t.After(c.deadline) {
		return c.deadline
	}
	return t
}

// end stops watching the context once the send has returned, and closes
// what the session dialled.
func (s *session) end() {
	for _, end := range s.ends {
		end()
	}
}

// classify maps what became of one message on an open session to what
// the outbox does with it. go-mail's SendError names the step that
// failed. Before the message's end a relay that answered with a code
// refused it: permanently (5xx: no such mailbox), given up on, or for now
// (4xx), deferred; a connection lost there leaves it not sent, and
// retried. The relay's answer to the message's end decides: a refusal is
// as before it, but a connection lost while the message went or before
// the answer came leaves it unknown whether the relay has it, so the
// error is a plain one, and the retry is a flagged repeat with the same
// Message-ID. A failure after the relay took it (the RSET go-mail sends
// next) is no failure: the mail is on its way.
func (a *Adapter) classify(err error) error {
	if err == nil {
		return nil
	}
	var se *gomail.SendError
	if !errors.As(err, &se) {
		return err
	}
	code := se.ErrorCode()
	switch {
	case se.Reason == gomail.ErrSMTPReset:
		return nil
	case code >= 500 && code < 600 && !se.IsTemp():
		return &core.Permanent{Err: err}
	case code >= 400 && code < 500:
		return a.deferred(err)
	case code == 0 && (se.Reason == gomail.ErrWriteContent || se.Reason == gomail.ErrSMTPDataClose):
		return err
	}
	return &core.NotSent{Err: err}
}

// deferred is a relay's refusal for now: a 4xx reply, at any step, says
// the command was not taken and to try again later (RFC 5321, 4.2.1), as
// a relay at its limit of connections or of messages a minute says it
// for as long as the limit holds. Nothing was sent, and sending sooner
// meets the same answer, so it is the outbox's retry-after: no failed
// attempt (eight of those in four minutes dropped the card while the
// relay still pushed back), due again after DeferWait, as SMTP names no
// wait of its own, and bounded by its age as every retry-after is. A
// question that closes meanwhile is not mailed (Post).
func (a *Adapter) deferred(err error) error {
	return &core.RetryAfter{After: a.opts.DeferWait, Err: err}
}
