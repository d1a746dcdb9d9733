// Package emailfake is a local SMTP server for tests (github.com/emersion/go-smtp),
// with a mailbox per recipient: it takes what askbridge sends, parses each
// message as a mail client would (headers, the text and HTML parts, the
// links), and can refuse mail with an SMTP status to test the outbox's
// retries.
package emailfake

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"html"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one received email, parsed.
type Message struct {
	From, To  string
	Subject   string
	MessageID string // without the angle brackets
	InReplyTo string
	Header    mail.Header
	Text      string
	HTML      string
	// Links are the HTML part's hrefs, in order, unescaped.
	Links []string
	// Helo is the name the session's EHLO gave, and UTF8 whether its
	// MAIL command declared SMTPUTF8.
	Helo string
	UTF8 bool
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	Addr string // host:port
	// Roots trusts the server's certificate, for STARTTLS.
	Roots *x509.CertPool

	mu      sync.Mutex
	boxes   map[string][]Message
	changed chan struct{}
	refuse  map[string][]*smtp.SMTPError
	busy    []*smtp.SMTPError
	turned  map[*smtp.Conn]*smtp.SMTPError // the sessions Busy refused
	user    string
	pass    string

	authed int
}

// Options shape the fake relay.
type Options struct {
	// User and Pass, when User is set, are the only credentials it takes
	// (PLAIN), and it refuses mail from sessions that did not
	// authenticate.
	User, Pass string
	// NoTLS offers no STARTTLS, as a misconfigured relay would.
	NoTLS bool
	// Implicit speaks TLS from the first byte, as on port 465, and so
	// offers no STARTTLS.
	Implicit bool
	// SMTPUTF8 offers SMTPUTF8 (RFC 6531): mail to and from addresses
	// that are not ASCII.
	SMTPUTF8 bool
}

// Start runs a server on 127.0.0.1 until the test ends, offering
// STARTTLS (or implicit TLS) with a certificate of its own (Roots trusts
// it).
func Start(t testing.TB, o Options) *Server {
	user, pass := o.User, o.Pass
	t.Helper()
	cert, roots := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &Server{Addr: ln.Addr().String(), boxes: map[string][]Message{}, refuse: map[string][]*smtp.SMTPError{},
		turned: map[*smtp.Conn]*smtp.SMTPError{}, changed: make(chan struct{}), user: user, pass: pass}
	s := smtp.NewServer(smtp.BackendFunc(f.newSession))
	s.Domain = "mail.example.test"
	s.AllowInsecureAuth = true
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	f.Roots = roots
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	s.EnableSMTPUTF8 = o.SMTPUTF8
	if o.NoTLS {
		s.TLSConfig = nil
	}
	var l net.Listener = ln
	if o.Implicit {
		l = tls.NewListener(ln, s.TLSConfig)
	}
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return f
}

// Refuse makes the next len(errs) messages to to fail at RCPT with these
// statuses, in order.
func (f *Server) Refuse(to string, errs ...*smtp.SMTPError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	to = strings.ToLower(to)
	f.refuse[to] = append(f.refuse[to], errs...)
}

// Busy makes the next len(errs) sessions fail at their greeting (EHLO,
// and the HELO a client falls back to) with these statuses, in order, as
// a relay at its limit of connections or of messages a minute does.
func (f *Server) Busy(errs ...*smtp.SMTPError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.busy = append(f.busy, errs...)
}

// newSession starts a session on c, unless Busy turns c away.
func (f *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, ok := f.turned[c]; ok {
		return nil, err
	}
	if len(f.busy) > 0 {
		err := f.busy[0]
		f.busy, f.turned[c] = f.busy[1:], err
		return nil, err
	}
	return &session{f: f, helo: c.Hostname()}, nil
}

// Authenticated is how many sessions authenticated.
func (f *Server) Authenticated() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.authed
}

// Mailbox returns what to has received, oldest first.
func (f *Server) Mailbox(to string) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Message(nil), f.boxes[strings.ToLower(to)]...)
}

// Wait waits until cond holds of to's mailbox, or d passes; it reports
// whether cond held. It wakes on each delivery, never by polling.
func (f *Server) Wait(to string, d time.Duration, cond func([]Message) bool) ([]Message, bool) {
	timeout := time.After(d)
	for {
		f.mu.Lock()
		box, changed := append([]Message(nil), f.boxes[strings.ToLower(to)]...), f.changed
		f.mu.Unlock()
		if cond(box) {
			return box, true
		}
		select {
		case <-changed:
		case <-timeout:
			return box, false
		}
	}
}

type session struct {
	f      *Server
	helo   string
	from   string
	utf8   bool
	to     []string
	authed bool
}

func (s *session) AuthMechanisms() []string {
	if s.f.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.f.user || pass != s.f.pass {
			return errors.New("bad credentials")
		}
		s.authed = true
		s.f.mu.Lock()
		s.f.authed++
		s.f.mu.Unlock()
		return nil
	}), nil
}

func (s *session) Mail(from string, o *smtp.MailOptions) error {
	if s.f.user != "" && !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from, s.utf8 = from, o != nil && o.UTF8
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if errs := f.refuse[strings.ToLower(to)]; len(errs) > 0 {
		f.refuse[strings.ToLower(to)] = errs[1:]
		return errs[0]
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := Parse(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, Message: "unreadable message: " + err.Error()}
	}
	m.From, m.Helo, m.UTF8 = s.from, s.helo, s.utf8
	for _, to := range s.to {
		m.To = to
		f.boxes[strings.ToLower(to)] = append(f.boxes[strings.ToLower(to)], m)
	}
	close(f.changed)
	f.changed = make(chan struct{})
	return nil
}

func (s *session) Reset()        { s.from, s.utf8, s.to = "", false, nil }
func (s *session) Logout() error { return nil }

var href = regexp.MustCompile(`href="([^"]*)"`)

// Parse reads a message as a mail client would: its headers, and the text
// and HTML parts of a multipart/alternative body, decoded.
func Parse(raw []byte) (Message, error) {
	mm, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Message{}, err
	}
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(mm.Header.Get("Subject"))
	if err != nil {
		return Message{}, err
	}
	m := Message{Header: mm.Header, Subject: subject,
		MessageID: strings.Trim(mm.Header.Get("Message-Id"), "<>"), InReplyTo: strings.Trim(mm.Header.Get("In-Reply-To"), "<>")}
	mt, params, err := mime.ParseMediaType(mm.Header.Get("Content-Type"))
	if err != nil {
		return Message{}, err
	}
	if !strings.HasPrefix(mt, "multipart/") {
		body, err := decode(mm.Body, mm.Header.Get("Content-Transfer-Encoding"))
		m.Text = body
		return m, err
	}
	mr := multipart.NewReader(mm.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Message{}, err
		}
		body, err := decode(p, p.Header.Get("Content-Transfer-Encoding"))
		if err != nil {
			return Message{}, err
		}
		pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		switch pt {
		case "text/plain":
			m.Text = body
		case "text/html":
			m.HTML = body
		}
	}
	for _, h := range href.FindAllStringSubmatch(m.HTML, -1) {
		m.Links = append(m.Links, html.UnescapeString(h[1]))
	}
	return m, nil
}

// decode undoes a part's transfer encoding (multipart.Reader has already
// undone quoted-printable on parts; a single-part body has not).
func decode(r io.Reader, enc string) (string, error) {
	switch strings.ToLower(enc) {
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, r)
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	}
	b, err := io.ReadAll(r)
	return strings.ReplaceAll(string(b), "\r\n", "\n"), err
}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "emailfake"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k, Leaf: leaf}, pool
}
