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
	log    zerolog.Logger

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

func newVerifier(openID, appID string, c *http.Client, now func() time.Time, log zerolog.Logger) *verifier {
	return &verifier{openID: openID, appID: appID, http: c, now: now, log: log, ready: make(chan struct{})}
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
	if err := v.readEndorsementsFrom(ctx, jwks); err != nil {
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
	k, err := keyfunc.NewDefaultOverrideCtx(kctx, []string{jwks}, keyfunc.Override{Client: v.http, HTTPTimeout: keysTimeout,
		RateLimitWaitMax: time.Second, NoErrorReturnFirstHTTPReq: &quietFirstFailure, RefreshErrorHandlerFunc: v.refreshFailed})
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.keys, v.jwks = k, jwks
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

// readEndorsements reads each key's endorsements from the keys
// document, at most once a minute once a read has succeeded. The read is
// the verifier's, not the request's that needed it: it goes on if that
// request's caller hangs up, and a read that fails leaves the next
// request free to try again rather than refused for a minute.
func (v *verifier) readEndorsements(ctx context.Context) {
	v.mu.Lock()
	if time.Since(v.readAt) < time.Minute && v.endorse != nil {
		v.mu.Unlock()
		return
	}
	jwks := v.jwks
	v.mu.Unlock()
	_ = v.readEndorsementsFrom(ctx, jwks) // the next request tries again
}

// readEndorsementsFrom reads the keys document jwks and keeps each key's
// endorsements.
func (v *verifier) readEndorsementsFrom(ctx context.Context, jwks string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keysTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, jwks, nil)
	if err != nil {
		return err
	}
	resp, err := v.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var doc struct {
		Keys []struct {
			KID          string   `json:"kid"`
			Endorsements []string `json:"endorsements"`
		} `json:"keys"`
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("teams: keys document: %s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc); err != nil {
		return fmt.Errorf("teams: keys document: %w", err)
	}
	m := map[string][]string{}
	for _, k := range doc.Keys {
		m[k.KID] = k.Endorsements
	}
	v.mu.Lock()
	v.endorse, v.readAt = m, time.Now()
	v.mu.Unlock()
	return nil
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

// bearer is a Bot Connector token that verify found genuine: what is left
// to check depends on the activity it came with (admits).
type bearer struct {
	serviceURL string // its serviceurl claim
	kid        string // the key it is signed with
}

// verify checks r's bearer token on its own, before the activity is read:
// signature by a current Bot Framework key (RS256), issuer, audience (the
// app id), expiry and not-before.
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
		return bearer{}, fmt.Errorf("teams: bearer token: %w", err)
	}
	kid, _ := tok.Header["kid"].(string)
	return bearer{serviceURL: c.ServiceURL, kid: kid}, nil
}

// admits checks a genuine token against the activity it came with: the
// serviceurl claim is the activity's, and its key is endorsed for the
// activity's channel.
func (v *verifier) admits(ctx context.Context, b bearer, serviceURL, channel string) error {
	if !sameServiceURL(b.serviceURL, serviceURL) {
		return errServiceURL
	}
	if !v.endorsed(ctx, b.kid, channel) {
		return fmt.Errorf("%w %q", errNotEndorsed, channel)
	}
	return nil
}

// sameServiceURL compares service URLs as the SDKs do: ignoring one
// trailing slash and the case of the letters.
func sameServiceURL(a, b string) bool {
	return a != "" && strings.EqualFold(strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/"))
}
