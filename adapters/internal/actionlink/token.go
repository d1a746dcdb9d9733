// Package actionlink is the signed, single-use action link the one-way
// surfaces (email, ntfy) put behind every answer: a token bound to one
// question, one action on it and the one recipient it was sent to, sealed
// (encrypted and authenticated) with a key derived from the server's key
// and expiring with the question, and the web page that turns it into an
// answer through the chokepoint.
//
// A link is used once because the chokepoint says so: its action is one
// answer, one vote or one decline by one recipient, and a second use of it
// is refused by core as already closed, already answered or already
// counted, and told so. Nothing else keeps a record of links, so a link
// works on any replica and after a restart (law 5), and an unused link
// stays good until its question closes or its deadline passes.
package actionlink

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// Claims are what a token binds: the button's ref (question, item, action,
// option), the surface and recipient it was sent to (an address, a
// topic), who acts when it is used, and when it stops working.
type Claims struct {
	Ref     core.Ref
	Surface core.Surface
	// To is the recipient: the decider id the answer is recorded under.
	To      string
	Expires time.Time
	// Menu makes the link a list of every action on the question for To,
	// each its own link, rather than one action (Ref is then the first
	// action's): for a surface with room for few buttons.
	Menu bool
}

// wire is a token's payload, sealed (or, in a link sent before tokens
// were sealed, signed). Short keys: the token rides in a URL.
type wire struct {
	Ref     string `json:"r"`
	Surface string `json:"s"`
	To      string `json:"t"`
	Expires int64  `json:"e"`
	Menu    bool   `json:"m,omitempty"`
}

// Why a token is refused. Each is a sentence a person reads on the page.
var (
	// ErrAltered: not a token this server signed, or changed since.
	ErrAltered = errors.New("this link is not one askbridge sent, or it was changed on the way")
	// ErrExpired: the question's deadline, as it stood when the link was
	// sent, has passed.
	ErrExpired = errors.New("this link has expired")
)

// b64 is how a token is spelt. Strict: one spelling per token, so no
// character can change (unused low bits of the last one included) and
// still open or verify.
var b64 = base64.RawURLEncoding.Strict()

// keyLabel separates the links' key from every other use of the server's
// key (the event log's pseudonyms); sealLabel the key that seals them.
const (
	keyLabel  = "askbridge action links v1"
	sealLabel = "askbridge action links v2 sealed"
)

// MaxTokenLen bounds a token read from a URL before any work is done on it.
const MaxTokenLen = 2048

// Signer seals and checks tokens with keys derived from the server's
// key, so every replica that shares the server's key checks every other
// replica's links.
type Signer struct {
	key  []byte      // signs the tokens of links sent before they were sealed
	seal cipher.AEAD // seals a token's claims: AES-256-GCM
}

// NewSigner derives the links' keys from the server's key.
func NewSigner(serverKey []byte) (*Signer, error) {
	if len(serverKey) < 16 {
		return nil, errors.New("actionlink: the server's key is too short")
	}
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, serverKey)
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(derive(sealLabel))
	if err != nil {
		return nil, err
	}
	seal, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Signer{key: derive(keyLabel), seal: seal}, nil
}

// Sign returns the token for c: its claims sealed (AES-GCM, a random
// nonce first), in unpadded base64url. Sealed, not only signed: a link's
// URL is logged by proxies and kept by browsers, and the recipient it
// names is an address, or an ntfy topic that works as a password.
func (s *Signer) Sign(c Claims) (string, error) {
	ref := c.Ref.Encode()
	if ref == "" || !c.Surface.IsChat() || c.To == "" || c.Expires.IsZero() {
		return "", errors.New("actionlink: a token needs a ref, a surface, a recipient and an expiry")
	}
	payload, err := json.Marshal(wire{Ref: ref, Surface: string(c.Surface), To: c.To, Expires: c.Expires.Unix(), Menu: c.Menu})
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.seal.NonceSize(), s.seal.NonceSize()+len(payload)+s.seal.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return b64.EncodeToString(s.seal.Seal(nonce, nonce, payload, nil)), nil
}

// open is a sealed token's payload, or false.
func (s *Signer) open(token string) ([]byte, bool) {
	n := s.seal.NonceSize()
	sealed, err := b64.DecodeString(token)
	if err != nil || len(sealed) < n {
		return nil, false
	}
	raw, err := s.seal.Open(nil, sealed[:n], sealed[n:], nil)
	return raw, err == nil
}

// signed is the payload of a token of a link sent before tokens were
// sealed (the payload and its HMAC-SHA256, each in unpadded base64url,
// joined by a dot), or false. Such links work until they expire.
func (s *Signer) signed(token string) ([]byte, bool) {
	p, sig, ok := strings.Cut(token, ".")
	if !ok {
		return nil, false
	}
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(p)) {
		return nil, false
	}
	raw, err := b64.DecodeString(p)
	return raw, err == nil
}

func (s *Signer) mac(p string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(p))
	return m.Sum(nil)
}

// Verify opens a sealed token (or checks the signature of one sent before
// tokens were sealed), checks its expiry at now and returns its
// claims. An expired token's claims come back with ErrExpired, so the page
// can still show how its question ended.
func (s *Signer) Verify(token string, now time.Time) (Claims, error) {
	if len(token) > MaxTokenLen {
		return Claims{}, ErrAltered
	}
	open := s.open
	if strings.Contains(token, ".") {
		open = s.signed
	}
	raw, ok := open(token)
	if !ok {
		return Claims{}, ErrAltered
	}
	var w wire
	if err := json.Unmarshal(raw, &w); err != nil {
		return Claims{}, ErrAltered
	}
	ref, err := core.DecodeRef(w.Ref)
	if err != nil || w.To == "" || !core.Surface(w.Surface).IsChat() {
		return Claims{}, ErrAltered
	}
	c := Claims{Ref: ref, Surface: core.Surface(w.Surface), To: w.To, Expires: time.Unix(w.Expires, 0).UTC(), Menu: w.Menu}
	if !now.Before(c.Expires) {
		return c, ErrExpired
	}
	return c, nil
}

// Link is one action of a card with the URL that does it.
type Link struct {
	Action card.Action
	URL    string
}

// Links signs every action of c for recipient to on surface, each
// expiring at the question's deadline, as URLs under base (the page's
// public URL, ending in "/"; "" leaves each a bare token, a link
// relative to a page beside it).
func (s *Signer) Links(q *core.Question, c card.Card, surface core.Surface, to, base string) ([]Link, error) {
	var out []Link
	for _, a := range Actions(c) {
		tok, err := s.Sign(Claims{Ref: a.Ref, Surface: surface, To: to, Expires: q.Deadline})
		if err != nil {
			return nil, err
		}
		out = append(out, Link{Action: a, URL: base + tok})
	}
	return out, nil
}

// MenuLink is the link to the page listing every action of c for to,
// or "" when the card has none.
func (s *Signer) MenuLink(q *core.Question, c card.Card, surface core.Surface, to, base string) (string, error) {
	as := Actions(c)
	if len(as) == 0 {
		return "", nil
	}
	tok, err := s.Sign(Claims{Ref: as[0].Ref, Surface: surface, To: to, Expires: q.Deadline, Menu: true})
	if err != nil {
		return "", err
	}
	return base + tok, nil
}
