// Package email is askbridge's email surface: each question is mailed to
// its route's recipients as a readable text and HTML message whose every
// action is a signed, single-use link (adapters/internal/actionlink).
// Opening a link shows a confirmation page and records nothing, since
// mail scanners and link previews open links; confirming records the
// answer through the chokepoint as the address the message was sent to.
//
// Email is one-way: a sent message cannot be edited, so when the
// question closes nobody is mailed again, and a link opened later shows
// the outcome instead.
package email

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/rs/zerolog"
)

// ActPath is where the links point, below the public URL.
const ActPath = "/email/act/"

// ErrImplicitTLSPort is TLSMode's refusal of port 465 with a mode other
// than TLSImplicit: a client that waits for the greeting in plain text,
// from a server that waits for its TLS handshake, hears nothing until
// its timeout, on every send, for good.
var ErrImplicitTLSPort = errors.New("port 465 is TLS from the first byte (RFC 8314)")

// TLSMode is the TLS mode of a connection to port when mode was asked
// for: "" is TLSStartTLS, or TLSImplicit on port 465; 465 with any other
// mode is ErrImplicitTLSPort (mode is returned as asked). It is the one
// rule, for New and for whoever checks the settings first, naming them.
func TLSMode(port int, mode string) (string, error) {
	switch {
	case mode == "" && port == gomail.DefaultPortSSL:
		return TLSImplicit, nil
	case mode == "":
		return TLSStartTLS, nil
	case port == gomail.DefaultPortSSL && mode != TLSImplicit:
		return mode, ErrImplicitTLSPort
	}
	return mode, nil
}

// TLS modes of the SMTP connection.
const (
	TLSStartTLS = "starttls" // STARTTLS, required (port 587)
	TLSImplicit = "tls"      // TLS from the first byte (port 465)
	TLSNone     = "none"     // plain text: a relay on the same host or network only
)

// Options configure an Adapter.
type Options struct {
	// Host and Port are the SMTP server's; Port defaults to 587 (the
	// submission port, with TLS "none" too), or 465 with TLS "tls".
	Host string
	Port int
	// TLS is TLSStartTLS (the default; TLSImplicit on port 465),
	// TLSImplicit or TLSNone. Port 465 takes TLSImplicit alone: it
	// speaks TLS from the first byte (RFC 8314), and a client waiting
	// there for a greeting in plain text would wait for good.
	TLS string
	// HELO is the name the EHLO gives this machine; default the
	// machine's host name when it is fully qualified, else the address
	// literal of the connection's own end ("[192.0.2.7]"), as RFC 5321
	// (4.1.4) asks of a client without a name: relays refuse an EHLO of
	// "localhost" or of a bare container name.
	HELO string
	// Username and Password, when set, authenticate (the strongest
	// mechanism both sides support).
	Username, Password string
	// From is the sender, "askbridge <askbridge@example.com>" or an
	// address alone. A domain that is not ASCII (an IDN) is named by
	// its ASCII form in Message-IDs; one IDNA refuses is refused
	// (CheckFrom).
	From string
	// PublicURL is where people's browsers reach askbridge; the links
	// are PublicURL + ActPath + token.
	PublicURL string
	// Key is the server's key; the links are signed with a key derived
	// from it, so every replica that shares it takes every replica's
	// links.
	Key []byte
	// Now is the clock links expire by; nil is the service's
	// (core.Service.Now), defaulted by the page (actionlink.Page.Clock),
	// so that a deadline and the link that expires with it read the
	// same clock.
	Now func() time.Time
	// RootCAs, when set, are the CAs trusted for the server's TLS
	// certificate instead of the system's.
	RootCAs *x509.CertPool
	// Timeout bounds one SMTP session, from the dial to the QUIT, so that
	// a relay that accepts and then stops answering fails the send rather
	// than holding it (and its delivery) for good; default 30s. The
	// delivery's context ending ends the session too.
	Timeout time.Duration
	// DeferWait is how long a message the relay refused for now (a 4xx
	// reply) waits before it goes again; default 1m (deferred).
	DeferWait time.Duration
	Log       zerolog.Logger
}

// Adapter is the email surface: a core.Courier that mails cards, and the
// page its links open.
type Adapter struct {
	svc    *core.Service
	opts   Options
	signer *actionlink.Signer
	from   *mail.Address
	domain string          // the right side of every Message-ID: from's domain, in ASCII (sender)
	copts  []gomail.Option // go-mail's, but the dialler (session.dial) and the EHLO's name
	tls    *tls.Config     // for implicit TLS, else nil
	helo   string          // the EHLO's name; "" for the connection's address (heloFor)
	addr   string          // the relay's host:port, as session.dial dials it
	page   *actionlink.Page
	log    zerolog.Logger
}

var _ core.ChatAdapter = (*Adapter)(nil)

// New checks opts and returns the adapter. It does not connect: the first
// delivery does, and a server that cannot be reached delays mail without
// losing any (the outbox retries).
func New(svc *core.Service, opts Options) (*Adapter, error) {
	host, err := relayHost(opts.Host)
	if err != nil {
		return nil, err
	}
	opts.Host = host
	signer, err := actionlink.NewSigner(opts.Key)
	if err != nil {
		return nil, fmt.Errorf("email: %w", err)
	}
	from, idDomain, err := sender(opts.From)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(opts.PublicURL, "http://") && !strings.HasPrefix(opts.PublicURL, "https://") {
		return nil, errors.New("email: the public URL must be an http(s) URL that people's browsers reach")
	}
	opts.PublicURL = strings.TrimSuffix(opts.PublicURL, "/")
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.DeferWait <= 0 {
		opts.DeferWait = time.Minute
	}
	if opts.TLS, err = TLSMode(opts.Port, opts.TLS); err != nil {
		return nil, fmt.Errorf("email: %w, which TLS %q does not speak: set TLS to %q for port %d, or use port %d for STARTTLS",
			err, opts.TLS, TLSImplicit, opts.Port, gomail.DefaultPortTLS)
	}
	helo, err := heloName(opts.HELO)
	if err != nil {
		return nil, err
	}
	tc := &tls.Config{ServerName: opts.Host, RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12}
	copts := []gomail.Option{gomail.WithTimeout(opts.Timeout), gomail.WithTLSConfig(tc)}
	var implicit *tls.Config
	switch opts.TLS {
	case TLSStartTLS:
		copts = append(copts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case TLSImplicit:
		// session.dial starts TLS, not go-mail: go-mail takes a connection
		// dialled for it as plain text under implicit TLS, and would then
		// refuse PLAIN and LOGIN over it. Under the opportunistic policy
		// it reads the TLS state off the connection instead, and starts
		// no second TLS, since a server offers no STARTTLS inside TLS
		// (RFC 3207, 4.2).
		copts = append(copts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
		implicit = tc
		if opts.Port == 0 {
			opts.Port = gomail.DefaultPortSSL
		}
	case TLSNone:
		copts = append(copts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		return nil, fmt.Errorf("email: TLS %q is not starttls, tls or none", opts.TLS)
	}
	// The port is always set here, never left to go-mail's port policies,
	// which dial 25 for a plain-text relay where README promises 587.
	if opts.Port == 0 {
		opts.Port = gomail.DefaultPortTLS
	}
	copts = append(copts, gomail.WithPort(opts.Port))
	if opts.Username != "" {
		copts = append(copts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(opts.Username), gomail.WithPassword(opts.Password))
	}
	a := &Adapter{svc: svc, opts: opts, signer: signer, from: from, domain: idDomain, copts: copts, tls: implicit, helo: helo, log: opts.Log,
		addr: net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port))}
	// Each send makes its own client (for its own dialler); this one
	// checks the options once.
	if _, err := a.client(nil, a.helo); err != nil {
		return nil, fmt.Errorf("email: %w", err)
	}
	a.page = &actionlink.Page{Svc: svc, Signer: signer, Surface: core.SurfaceEmail, Prefix: ActPath,
		ConfirmAddress: true, Now: opts.Now, Log: opts.Log}
	return a, nil
}

// relayHost is the SMTP host as the dialler and the certificate check
// take it: a name, or an IP address (an IPv6 one bare, or in brackets as
// URLs write it). A port, a scheme or a path is refused here, where the
// setting is read and the refusal names it: go-mail takes any text as
// the host, and every mail would fail at the dial, be retried and be
// given up on, with nothing said at start.
func relayHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("email: the SMTP host is required")
	}
	if inner, ok := strings.CutPrefix(h, "["); ok {
		if inner, ok = strings.CutSuffix(inner, "]"); ok && net.ParseIP(inner) != nil {
			return inner, nil
		}
	}
	if net.ParseIP(h) == nil && strings.ContainsAny(h, ":/@[] \t\r\n") {
		return "", fmt.Errorf("email: the SMTP host %q is not a host name or an IP address alone (its port is set on its own)", h)
	}
	return h, nil
}

// Surface is email.
func (a *Adapter) Surface() core.Surface { return core.SurfaceEmail }

// Run has nothing to receive: answers arrive at the page. It waits for
// ctx.
func (a *Adapter) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// Mount adds the links' page.
func (a *Adapter) Mount(mux *http.ServeMux) { mux.Handle(ActPath, a.page) }

// Post mails q's card to the recipient ref.Room, with links signed for
// that address. A question that closed before its mail went out is not
// mailed: the delivery is dropped, and recorded as undelivered.
func (a *Adapter) Post(ctx context.Context, q *core.Question, ref core.MessageRef) (core.MessageRef, error) {
	if !q.Open() {
		return ref, &core.Permanent{Err: errors.New("not mailed: the question closed before the message went out")}
	}
	to := Recipient(ref.Room)
	msg, err := a.cardMessage(q, card.New(q, ref), to)
	if err != nil {
		return ref, &core.Permanent{Err: err}
	}
	id := a.messageID(string(q.ID), ref.Delivery)
	if err := a.send(ctx, to, id, "", msg); err != nil {
		return ref, err
	}
	ref.ID = id
	return ref, nil
}

// Update does nothing: a sent message cannot be changed, and a closed
// question mails nobody again. The links show how it stands.
func (a *Adapter) Update(context.Context, *core.Question, core.MessageRef) error { return nil }

// Remind mails a reminder to room as RemindDelivery does. Called
// without a delivery (the outbox calls RemindDelivery), it has no key to
// keep its Message-ID by, so each call is a message of its own.
func (a *Adapter) Remind(ctx context.Context, q *core.Question, room string) error {
	return a.RemindDelivery(ctx, q, core.Delivery{Room: room, Key: fmt.Sprintf("remind:%s:%d", room, time.Now().UnixNano())})
}

var _ core.DeliveryReminder = (*Adapter)(nil)

// RemindDelivery mails the card again with fresh links, in reply to the
// first message sent to d.Room, unless its recipient has already acted
// on it, from any surface (core.Service.HasActed). Its Message-ID is d's
// key's, so a retry of the same reminder is the same message.
func (a *Adapter) RemindDelivery(ctx context.Context, q *core.Question, d core.Delivery) error {
	room := d.Room
	to := Recipient(room)
	if a.svc.HasActed(q, core.SurfaceEmail, to) {
		return nil
	}
	view := card.New(q, core.MessageRef{Surface: core.SurfaceEmail, Room: room, Kind: core.DeliverPost})
	view.Markers = append([]card.Marker{card.MarkerReminder}, view.Markers...)
	// Who it is still waiting for, as every surface's reminder says.
	view.Mentions = a.svc.CallOn(q, core.SurfaceEmail)
	msg, err := a.cardMessage(q, view, to)
	if err != nil {
		return &core.Permanent{Err: err}
	}
	var first string
	for _, m := range q.Messages {
		if m.Surface == core.SurfaceEmail && m.Room == room && first == "" {
			first = m.ID
		}
	}
	return a.send(ctx, to, a.messageID(string(q.ID), d.Key), first, msg)
}

// Digest mails the "while you were away" summary to room.
func (a *Adapter) Digest(ctx context.Context, d core.Digest, room string) error {
	_, personal := core.DMUser(room)
	msg, err := RenderDigest(d, personal)
	if err != nil {
		return &core.Permanent{Err: err}
	}
	return a.send(ctx, Recipient(room), a.messageID("digest", digestKey(d, room, personal)), "", msg)
}

// digestKey keeps a digest's Message-ID, as a delivery's key keeps a
// card's: the same digest mailed again is the same message, and two
// digests are two. After a downtime every route that mails one address
// sends it a digest of the same period, so the room and the period do
// not tell them apart (and mail clients show one message per
// Message-ID); a route's digest holds only its route's questions, so its
// route does. A person's digest goes to their own room (core.DMRoom), and
// spans routes.
func digestKey(d core.Digest, room string, personal bool) string {
	key := room + d.From.String()
	if personal {
		return key
	}
	for _, qs := range [][]*core.Question{d.Open, d.Closed, d.Asked} {
		if len(qs) > 0 {
			return key + "\x00" + qs[0].Route
		}
	}
	return key
}

// Recipient is the address a room names: a route's recipient is the room
// itself, a person's direct messages go to their address (core.DMRoom).
func Recipient(room string) string {
	if to, ok := core.DMUser(room); ok {
		return to
	}
	return room
}

// cardMessage renders card for recipient to, with its links, but none
// for an act to may not take though they may answer (offered).
func (a *Adapter) cardMessage(q *core.Question, c card.Card, to string) (Message, error) {
	c = a.offered(q, c, to)
	links, err := a.signer.Links(q, c, core.SurfaceEmail, to, a.opts.PublicURL+ActPath)
	if err != nil {
		return Message{}, err
	}
	m := Links{}
	for _, l := range links {
		m[l.Action.Ref] = l.URL
	}
	return RenderCard(c, m)
}

// messageID is stable for one question and delivery, so a message sent
// again after a lost acknowledgement carries the same Message-ID and
// mail clients show it once. Its domain is the sender's in ASCII
// (sender), as a msg-id must be.
func (a *Adapter) messageID(qid, key string) string {
	sum := sha256.Sum256([]byte(key))
	return qid + "." + hex.EncodeToString(sum[:8]) + "@" + a.domain
}

// offered is c with only the actions to may take (actionlink.Offered).
// An adapter with no service (a renderer's test) has none to ask.
func (a *Adapter) offered(q *core.Question, c card.Card, to string) card.Card {
	if a.svc == nil {
		return c
	}
	return actionlink.Offered(a.svc, q, c, core.Decider{Surface: core.SurfaceEmail, ID: to})
}
