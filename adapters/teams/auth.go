package teams

import (
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
// token names a key it does not know).
type verifier struct {
	openID string
	appID  string
	http   *http.Client
	now    func() time.Time

	mu    sync.Mutex
	keys  keyfunc.Keyfunc
	ready chan struct{}
	jwks  string
	// endorse is each signing key's "endorsements": the channels it may
	// sign for. No JWK library keeps this Microsoft field, so it is read
	// from the keys document beside keyfunc, again when a token names a
	// key it has not seen (at most once a minute).
	endorse map[string][]string
	readAt  time.Time
}

func newVerifier(openID, appID string, c *http.Client, now func() time.Time) *verifier {
	return &verifier{openID: openID, appID: appID, http: c, now: now, ready: make(chan struct{})}
}

// start fetches the metadata and the keys, retrying until it has them or
// ctx ends; the keys are kept fresh until ctx ends.
func (v *verifier) start(ctx context.Context, retry func(attempt int) bool) error {
	for attempt := 0; ; attempt++ {
		jwks, err := v.metadata(ctx)
		if err == nil {
			k, kerr := keyfunc.NewDefaultOverrideCtx(ctx, []string{jwks}, keyfunc.Override{Client: v.http, HTTPTimeout: 20 * time.Second})
			if kerr == nil {
				v.mu.Lock()
				v.keys, v.jwks = k, jwks
				v.mu.Unlock()
				v.readEndorsements(ctx)
				close(v.ready)
				return nil
			}
			err = kerr
		}
		if ctx.Err() != nil || !retry(attempt) {
			return fmt.Errorf("teams: signing keys: %w", err)
		}
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

// readEndorsements reads each key's endorsements from the keys
// document.
func (v *verifier) readEndorsements(ctx context.Context) {
	v.mu.Lock()
	if time.Since(v.readAt) < time.Minute && v.endorse != nil {
		v.mu.Unlock()
		return
	}
	v.readAt = time.Now()
	jwks := v.jwks
	v.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, jwks, nil)
	if err != nil {
		return
	}
	resp, err := v.http.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var doc struct {
		Keys []struct {
			KID          string   `json:"kid"`
			Endorsements []string `json:"endorsements"`
		} `json:"keys"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc) != nil {
		return
	}
	m := map[string][]string{}
	for _, k := range doc.Keys {
		m[k.KID] = k.Endorsements
	}
	v.mu.Lock()
	v.endorse = m
	v.mu.Unlock()
}

// endorsed reports whether the key kid may sign for channel, as the
// keys document says.
func (v *verifier) endorsed(ctx context.Context, kid, channel string) bool {
	for range 2 {
		v.mu.Lock()
		e, ok := v.endorse[kid]
		v.mu.Unlock()
		if ok {
			return channel != "" && slices.Contains(e, channel)
		}
		v.readEndorsements(ctx)
	}
	return false
}

// claims are a Bot Connector token's claims.
type claims struct {
	jwt.RegisteredClaims
	ServiceURL string `json:"serviceurl"`
}

// check verifies r's bearer token for an activity from serviceURL on
// channel: signature by a current Bot Framework key (RS256) endorsed for
// the channel, issuer, audience (the app id), expiry and not-before, and
// the serviceurl claim.
func (v *verifier) check(r *http.Request, serviceURL, channel string) error {
	v.mu.Lock()
	keys := v.keys
	v.mu.Unlock()
	if keys == nil {
		return errNotReady
	}
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || raw == "" {
		return errNoToken
	}
	var c claims
	tok, err := jwt.ParseWithClaims(raw, &c, keys.KeyfuncCtx(r.Context()),
		jwt.WithValidMethods([]string{"RS256"}),
		jwt.WithIssuer(Issuer),
		jwt.WithAudience(v.appID),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(clockSkew),
		jwt.WithTimeFunc(v.now),
	)
	if err != nil {
		return fmt.Errorf("teams: bearer token: %w", err)
	}
	if !sameServiceURL(c.ServiceURL, serviceURL) {
		return errServiceURL
	}
	if kid, _ := tok.Header["kid"].(string); !v.endorsed(r.Context(), kid, channel) {
		return fmt.Errorf("%w %q", errNotEndorsed, channel)
	}
	return nil
}

// sameServiceURL compares service URLs as the SDKs do: ignoring one
// trailing slash and the case of the letters.
func sameServiceURL(a, b string) bool {
	return a != "" && strings.EqualFold(strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/"))
}
