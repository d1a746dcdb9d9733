package teams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/rs/zerolog"
)

// The Bot Connector's identity, as Microsoft's "Authentication with the
// Bot Connector API" documents it: tokens it sends are signed with keys
// listed (jwks_uri) in its OpenID metadata, issued by Issuer, for the
// bot's app id, and carry the service URL of the activity they come
// with.
const (
	DefaultOpenIDURL = "https://login.botframework.com/v1/.well-known/openidconfiguration"
	Issuer           = "https://api.botframework.com"
	// clockSkew is the leeway Microsoft's own SDKs allow on expiry and
	// not-before.
	clockSkew = 5 * time.Minute
	// keysTimeout bounds each read of the signing keys' document.
	keysTimeout = 20 * time.Second
	// keysRefresh is how often the keys (and their endorsements) are
	// read again: keyfunc's default, said here.
	keysRefresh = time.Hour
)

var (
	errNoToken       = errors.New("teams: no bearer token")
	errServiceURL    = errors.New("teams: the token's serviceurl is not the activity's")
	errNotReady      = errors.New("teams: the signing keys have not been fetched yet")
	errNotEndorsed   = errors.New("teams: the signing key is not endorsed for channel")
	errNoKeysLocated = errors.New("teams: the OpenID metadata names no jwks_uri")
)

// verifier checks inbound bearer tokens against the Bot Framework's
// signing keys, which it fetches through the OpenID metadata and keeps
// fresh (keyfunc refreshes them in the background, and at once when a
// token whose claims pass names a key it does not know).
type verifier struct {
	openID string
	http   *http.Client
	log    zerolog.Logger
	// refreshEvery is keysRefresh, shorter in tests.
	refreshEvery time.Duration
	// parser checks a token whole; precheck its claims alone, before
	// its key is looked up (verify).
	parser   *jwt.Parser
	precheck *jwt.Validator

	mu    sync.Mutex
	keys  keyfunc.Keyfunc
	ready chan struct{}
	// endorse is each signing key's "endorsements": the channels it may
	// sign for. No JWK library keeps this Microsoft field, so it is read
	// from each keys document keyfunc reads (endorsementTap).
	endorse map[string][]string
}

func newVerifier(openID, appID string, c *http.Client, now func() time.Time, log zerolog.Logger) *verifier {
	// What a token's claims must pass: issuer, audience (the app id),
	// expiry and not-before.
	rules := []jwt.ParserOption{jwt.WithIssuer(Issuer), jwt.WithAudience(appID), jwt.WithExpirationRequired(),
		jwt.WithLeeway(clockSkew), jwt.WithTimeFunc(now)}
	return &verifier{openID: openID, http: c, log: log, refreshEvery: keysRefresh, ready: make(chan struct{}),
		parser:   jwt.NewParser(append(rules, jwt.WithValidMethods([]string{"RS256"}))...),
		precheck: jwt.NewValidator(rules...),
	}
}

// start fetches the metadata, the keys and their endorsements,
// retrying until it has all three or ctx ends; the keys are kept fresh
// until ctx ends.
// retry is told why an attempt failed, and whether to try again.
func (v *verifier) start(ctx context.Context, retry func(attempt int, err error) bool) error {
	for attempt := 0; ; attempt++ {
		err := v.fetch(ctx)
		if err == nil {
			close(v.ready)
			return nil
		}
		if ctx.Err() != nil || !retry(attempt, err) {
			return fmt.Errorf("teams: signing keys: %w", err)
		}
	}
}

// fetch makes one attempt at what start needs. keyfunc is told to fail
// when its first read of the keys does (by default it would return as
// if it had them, and tokens would be refused until a refresh happened
// to read them); it starts its refresh before that read, so the refresh
// runs under a context of its own that a failed attempt ends.
func (v *verifier) fetch(ctx context.Context) error {
	jwks, err := v.metadata(ctx)
	if err != nil {
		return err
	}
	fetched := false
	kctx, stop := context.WithCancel(ctx)
	defer func() {
		if !fetched {
			stop()
		}
	}()
	quietFirstFailure := false
	// A token naming a key keyfunc does not know has it read the keys
	// again, at most once in five minutes; a request that comes
	// meanwhile waits at most a second for that, not a minute.
	// Every read of the keys keyfunc makes (its first, its hourly
	// refresh, one for a key not seen before) reads their endorsements
	// too, so those are always the keys' own.
	next := v.http.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	tapped := *v.http
	tapped.Transport = endorsementTap{next: next, keep: v.keepEndorsements}
	k, err := keyfunc.NewDefaultOverrideCtx(kctx, []string{jwks}, keyfunc.Override{Client: &tapped, HTTPTimeout: keysTimeout,
		RateLimitWaitMax: time.Second, NoErrorReturnFirstHTTPReq: &quietFirstFailure, RefreshErrorHandlerFunc: v.refreshFailed,
		RefreshInterval: v.refreshEvery})
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.keys = k
	v.mu.Unlock()
	fetched = true
	return nil
}

// refreshFailed logs a failed background refresh of the keys through
// the adapter's logger (keyfunc's default writes to slog's).
func (v *verifier) refreshFailed(url string) func(context.Context, error) {
	return func(_ context.Context, err error) {
		v.log.Warn().Err(err).Str("url", url).Msg("teams: the signing keys could not be refreshed; the ones read before stay in use")
	}
}

// metadata reads the OpenID metadata's jwks_uri.
func (v *verifier) metadata(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.openID, nil)
	if err != nil {
		return "", err
	}
	resp, err := v.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("teams: OpenID metadata: %s", resp.Status)
	}
	var m struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return "", fmt.Errorf("teams: OpenID metadata: %w", err)
	}
	if m.JWKSURI == "" {
		return "", errNoKeysLocated
	}
	return m.JWKSURI, nil
}

// maxKeysDoc bounds the keys document.
const maxKeysDoc = 1 << 20

// endorsementTap is the transport of keyfunc's reads of the keys: it
// keeps the endorsements of each document read whole. A document whose
// endorsements cannot be read is a failed read, so keyfunc keeps the
// keys it had, and they keep their endorsements.
type endorsementTap struct {
	next http.RoundTripper
	keep func(doc []byte) error
}

func (t endorsementTap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	doc, err := io.ReadAll(io.LimitReader(resp.Body, maxKeysDoc+1))
	resp.Body.Close()
	switch {
	case err != nil:
	case len(doc) > maxKeysDoc:
		err = errors.New("teams: keys document: over 1 MiB")
	default:
		err = t.keep(doc)
	}
	if err != nil {
		return nil, err
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(doc)), int64(len(doc))
	return resp, nil
}

// keepEndorsements keeps each key's endorsements as the keys document
// doc lists them.
func (v *verifier) keepEndorsements(doc []byte) error {
	var d struct {
		Keys []struct {
			KID          string   `json:"kid"`
			Endorsements []string `json:"endorsements"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return fmt.Errorf("teams: keys document: %w", err)
	}
	m := make(map[string][]string, len(d.Keys))
	for _, k := range d.Keys {
		m[k.KID] = k.Endorsements
	}
	v.mu.Lock()
	v.endorse = m
	v.mu.Unlock()
	return nil
}

// endorsed reports whether the key kid may sign for channel, as the
// keys document last read says.
func (v *verifier) endorsed(kid, channel string) bool {
	v.mu.Lock()
	e := v.endorse[kid]
	v.mu.Unlock()
	return channel != "" && slices.Contains(e, channel)
}

// claims are a Bot Connector token's claims.
type claims struct {
	jwt.RegisteredClaims
	ServiceURL string `json:"serviceurl"`
}

// bearer is a Bot Connector token that verify found genuine: what is left
// to check depends on the activity it came with (admits).
type bearer struct {
	serviceURL string // its serviceurl claim
	kid        string // the key it is signed with
}

// verify checks r's bearer token on its own, before the activity is read:
// signature by a current Bot Framework key (RS256), issuer, audience (the
// app id), expiry and not-before.
//
// The claims are checked before the key is looked up as well as after:
// unverified, they prove nothing, but a token they fail is refused
// anyway, and a key id no key has makes keyfunc read the keys again, at
// most once in five minutes. Checked first, a made-up key id on a junk
// token cannot spend that read and leave a key Microsoft just rotated in
// unread. The lookup runs detached from the caller (keyfunc bounds it to
// a second), so a caller hanging up cannot spend it either.
func (v *verifier) verify(r *http.Request) (bearer, error) {
	v.mu.Lock()
	keys := v.keys
	v.mu.Unlock()
	if keys == nil {
		return bearer{}, errNotReady
	}
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || raw == "" {
		return bearer{}, errNoToken
	}
	lookup := keys.KeyfuncCtx(context.WithoutCancel(r.Context()))
	var c claims
	tok, err := v.parser.ParseWithClaims(raw, &c, func(t *jwt.Token) (any, error) {
		if err := v.precheck.Validate(t.Claims); err != nil {
			return nil, err
		}
		return lookup(t)
	})
	if err != nil {
		return bearer{}, fmt.Errorf("teams: bearer token: %w", err)
	}
	kid, _ := tok.Header["kid"].(string)
	return bearer{serviceURL: c.ServiceURL, kid: kid}, nil
}

// admits checks a genuine token against the activity it came with: the
// serviceurl claim is the activity's, and its key is endorsed for the
// activity's channel.
func (v *verifier) admits(b bearer, serviceURL, channel string) error {
	if !sameServiceURL(b.serviceURL, serviceURL) {
		return errServiceURL
	}
	if !v.endorsed(b.kid, channel) {
		return fmt.Errorf("%w %q", errNotEndorsed, channel)
	}
	return nil
}

// sameServiceURL compares service URLs as the SDKs do: ignoring one
// trailing slash and the case of the letters.
func sameServiceURL(a, b string) bool {
	return a != "" && strings.EqualFold(strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/"))
}
