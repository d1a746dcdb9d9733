// Package webhook is askbridge's callback door: when a question that
// names a callback URL closes, the URL is sent the same JSON a wait for
// the question returns, signed so that the receiver can tell it came from
// this bridge, was meant for it, and is fresh.
//
// # The signature
//
// Each request carries the event id (HeaderID, "<question id>/closed"),
// the Unix time it was signed at (HeaderTimestamp) and signatures
// (HeaderSignature): comma-separated "v<n>=" values, each the hex
// HMAC-SHA256, under the receiver's secret, of
//
//	v3: id + "." + timestamp + "." + URL + "\n" + body
//	v2: id + "." + timestamp + "." + body
//	v1: timestamp + "." + body
//
// where URL is the callback URL exactly as the ask or the route named it
// (the one before any redirect), and body the raw bytes received. A
// receiver checks v3 against its own callback URL (VerifyTarget does, for
// Go), refuses a timestamp more than five minutes from its clock, and
// processes each event id once. Each part matters: the timestamp refuses
// a request replayed later, the id one replayed under a new id past the
// dedupe, and the URL one replayed to another receiver. One secret can
// sign for many receivers (webhooks.secret is every callback's without a
// secret of its own), and a receiver that checks only v2 takes a request
// captured at any of them (by that receiver, a proxy before it, or its
// logs) as its own. No part holds what another could be confused with:
// an id is base32 and "/closed", a timestamp digits, and a URL no line
// break (the allow list parses it, and a URL parser refuses one). v1 and
// v2 are still sent, for receivers written before v3.
//
// Sends come from the outbox (core/loops' DeliverCalls): the webhook is
// stored with the close itself and sent at least once, retried with
// backoff on a failure or any answer but a 2xx or 410 Gone, after the
// wait a 429 or 503 names in Retry-After, and given up after a configured
// age with an undelivered event. Every attempt carries the same event id (the delivery's key), by
// which a receiver drops repeats.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/retryafter"
	"github.com/askbridge/askbridge/adapters/internal/tracehttp"
	"github.com/askbridge/askbridge/core"
)

// The headers every webhook carries.
const (
	// HeaderID is the event id: the same on every attempt of one
	// webhook, so a receiver processes each id once.
	HeaderID = "Askbridge-Webhook-Id"
	// HeaderTimestamp is when this attempt was signed, in Unix seconds.
	HeaderTimestamp = "Askbridge-Webhook-Timestamp"
	// HeaderSignature is the signatures, "v1=…,v2=…,v3=…" (the package
	// doc says what each covers): v3 covers the callback URL too, so a
	// request replayed to another receiver of the same secret fails it.
	HeaderSignature = "Askbridge-Webhook-Signature"
)

// Options configure a Sender.
type Options struct {
	// Client sends the requests; nil is a client with a 30 s timeout,
	// which one given without a Timeout gets too (an attempt that never
	// ends would hold its webhook until the replica stops). Its
	// Transport is used, wrapped to carry the trace context (and to
	// refuse a redirect whose Location is missing or does not parse);
	// its redirect policy is replaced by one that follows only 307 and
	// 308 (which keep the body) to URLs Allow allows, at most 5 times, and
	// sends no Referer (it would name the callback URL with its query,
	// where a receiver's token may be).
	Client *http.Client
	// Allow are the URL prefixes callbacks may go to (webhooks.allow).
	Allow core.CallbackPrefixes
	// Body renders the closed question: the API's wait body
	// (httpapi.WaitBody), so a receiver parses one format either way.
	Body func(q *core.Question) ([]byte, error)
	// Keys choose each webhook's secret. With Allow set there must be a
	// Default, and every secret given is at least MinSecretLen bytes.
	Keys *Keys
	// Now is the clock the timestamp is read from; nil is time.Now.
	Now func() time.Time
}

// Sender sends close webhooks; it is the core.Caller the webhook outbox
// is drained through.
type Sender struct {
	client *http.Client
	body   func(q *core.Question) ([]byte, error)
	now    func() time.Time
	// live are the allow list and keys in force, swapped whole by
	// Reconfigure when the configuration file is reloaded.
	live atomic.Pointer[senderConfig]
}

// senderConfig is what a reload of the configuration changes.
type senderConfig struct {
	allow core.CallbackPrefixes
	keys  *Keys
}

var _ core.Caller = (*Sender)(nil)

// defaultTimeout bounds one attempt when the client sets no Timeout.
const defaultTimeout = 30 * time.Second

// New checks o and returns a Sender.
func New(o Options) (*Sender, error) {
	if o.Body == nil || o.Keys == nil {
		return nil, errors.New("webhook: a body renderer and keys are required")
	}
	if err := o.Allow.Validate(); err != nil {
		return nil, fmt.Errorf("webhook: %s", core.ErrorMessage(err))
	}
	if err := o.Keys.check(o.Allow); err != nil {
		return nil, err
	}
	c := &http.Client{}
	if o.Client != nil {
		copied := *o.Client
		c = &copied
	}
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	// The request carries the trace of the span it is sent under (core's
	// delivery span), so the receiver's trace goes on from the ask.
	c.Transport = locationGuard{tracehttp.Transport(c.Transport)}
	s := &Sender{client: c, body: o.Body}
	c.CheckRedirect = s.checkRedirect
	s.now = o.Now
	if s.now == nil {
		s.now = time.Now
	}
	s.live.Store(&senderConfig{allow: o.Allow, keys: o.Keys})
	return s, nil
}

// Reconfigure puts a reloaded allow list and keys in force for the
// webhooks sent from now on; a bad list or bad keys change nothing.
func (s *Sender) Reconfigure(allow core.CallbackPrefixes, keys *Keys) error {
	if keys == nil {
		return errors.New("webhook: keys are required")
	}
	if err := allow.Validate(); err != nil {
		return fmt.Errorf("webhook: %s", core.ErrorMessage(err))
	}
	if err := keys.check(allow); err != nil {
		return err
	}
	s.live.Store(&senderConfig{allow: allow, keys: keys})
	return nil
}

// Call sends the closed question q to d.Room, signed, as event d.Key.
// A refusal to send at all (no secret, a URL no longer allowed, a
// redirect it does not follow, 410 Gone) is core.Permanent; a 429 or
// 503 with Retry-After is core.RetryAfter; any other failure is retried.
func (s *Sender) Call(ctx context.Context, q *core.Question, d core.Delivery) error {
	live := s.live.Load()
	if err := live.allow.Check("callback_url", d.Room); err != nil {
		return &core.Permanent{Err: err} // the allow list has changed since the ask
	}
	key, err := live.keys.For(q, d.Room)
	if err != nil {
		return &core.Permanent{Err: err}
	}
	body, err := s.body(q)
	if err != nil {
		return &core.Permanent{Err: err}
	}
	ts := strconv.FormatInt(s.now().Unix(), 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Room, bytes.NewReader(body))
	if err != nil {
		return &core.Permanent{Err: err}
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "askbridge-webhook")
	req.Header.Set(HeaderID, d.Key)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, "v1="+sign(key, body, ts)+",v2="+sign(key, body, d.Key, ts)+",v3="+signTarget(key, body, d.Key, ts, d.Room))
	resp, err := s.client.Do(req)
	if err != nil {
		// The error names the URL, which goes to the log and the event
		// log: without its query, where a receiver's token may be.
		var ue *url.Error
		refused := errors.Is(err, errRedirect)
		if errors.As(err, &ue) {
			if refused {
				// The client names a refused redirect by its Location
				// as it came, often relative (no scheme or host): the
				// callback URL names the receiver.
				ue.URL = d.Room
			}
			ue.URL = core.ShownURL(ue.URL)
		}
		if refused {
			return &core.Permanent{Err: err}
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	return classify(resp, s.now())
}

// classify maps the receiver's answer to what the outbox does next.
func classify(resp *http.Response, now time.Time) error {
	st := resp.StatusCode
	if st >= 200 && st < 300 {
		return nil
	}
	err := fmt.Errorf("webhook: the receiver answered %d", st)
	switch st {
	case http.StatusGone:
		return &core.Permanent{Err: err} // the receiver says it will never take it
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		if wait := retryafter.Parse(resp.Header, now); wait > 0 {
			return &core.RetryAfter{After: wait, Err: err}
		}
	}
	return err
}

// sign is a signature of one attempt: hex HMAC-SHA256 under key of each
// of fields followed by ".", then the body. v1 signs the timestamp; v2
// the event id, then the timestamp. The timestamp is digits and the body
// a JSON object, so no other id, timestamp and body join into these bytes.
func sign(key, body []byte, fields ...string) string {
	return mac(key, strings.Join(fields, ".")+".", body)
}

// signTarget is the v3 signature of an attempt of event id, signed at
// ts, to target: of id, ".", ts, ".", target, a line break, then the
// body (the package doc says why no two of these join alike).
func signTarget(key, body []byte, id, ts, target string) string {
	return mac(key, id+"."+ts+"."+target+"\n", body)
}

// mac is the hex HMAC-SHA256 under key of head, then body.
func mac(key []byte, head string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(head))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}
