// Package oidcfake is a local OpenID Connect provider for tests: the
// discovery document (OpenID Connect Discovery 1.0, section 4), a JSON Web
// Key Set with one RSA key made at start, an authorization endpoint that
// signs in whoever the test says at once (no login form), and a token
// endpoint that checks the client, the code's one use, its redirect URI
// and the PKCE verifier (RFC 7636, S256), and returns an ID token signed
// RS256 (OpenID Connect Core 1.0, sections 2 and 3.1.3). A test can bend
// the next ID token's claims (a wrong audience, an expiry in the past, a
// nonce of its own) to see the console refuse it. It listens on loopback
// only.
package oidcfake

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Provider is the fake identity provider; URL is its issuer.
type Provider struct {
	URL          string
	ClientID     string
	ClientSecret string
	// Now is the provider's clock for the tokens it issues.
	Now func() time.Time

	srv *httptest.Server
	key *rsa.PrivateKey
	kid string

	mu     sync.Mutex
	user   map[string]any
	tweak  func(claims map[string]any)
	codes  map[string]grant
	issued int
}

// grant is an authorization code waiting for its exchange.
type grant struct {
	clientID, redirect, challenge, nonce string
	claims                               map[string]any
}

// New starts a provider for one client.
func New(clientID, clientSecret string) (*Provider, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	p := &Provider{ClientID: clientID, ClientSecret: clientSecret, Now: time.Now, key: key, kid: "test-key-1", codes: map[string]grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.srv = httptest.NewServer(mux)
	p.URL = p.srv.URL
	return p, nil
}

// Close stops the provider.
func (p *Provider) Close() { p.srv.Close() }

// SignInAs makes the next authorizations sign in someone with these
// claims (email, email_verified, groups, ...); sub defaults to "user-1".
func (p *Provider) SignInAs(claims map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.user = claims
}

// Tweak changes every ID token's claims, after the provider has set
// them, until it is called again (nil stops).
func (p *Provider) Tweak(f func(claims map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tweak = f
}

// Issued is how many ID tokens the provider has handed out.
func (p *Provider) Issued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issued
}

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                p.URL,
		"authorization_endpoint":                p.URL + "/authorize",
		"token_endpoint":                        p.URL + "/token",
		"jwks_uri":                              p.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"S256"},
		"scopes_supported":                      []string{"openid", "email", "profile", "groups"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"claims_supported":                      []string{"sub", "email", "email_verified", "groups", "name"},
	})
}

func (p *Provider) jwks(w http.ResponseWriter, _ *http.Request) {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: p.kid, Algorithm: string(jose.RS256), Use: "sig"}}}
	writeJSON(w, http.StatusOK, set)
}

// authorize signs the configured user in at once and sends the browser
// back with a code; a malformed request is answered here, as a provider
// does when it cannot trust the redirect URI.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case q.Get("client_id") != p.ClientID:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case err != nil || redirect.Scheme == "" || redirect.Host == "":
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || !strings.Contains(" "+q.Get("scope")+" ", " openid "):
		http.Error(w, "response_type code and scope openid are required", http.StatusBadRequest)
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "PKCE with S256 is required", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	user := p.user
	code := random()
	p.codes[code] = grant{clientID: p.ClientID, redirect: redirect.String(), challenge: q.Get("code_challenge"), nonce: q.Get("nonce"), claims: user}
	p.mu.Unlock()
	back := redirect.Query()
	if user == nil {
		back.Set("error", "access_denied")
	} else {
		back.Set("code", code)
	}
	back.Set("state", q.Get("state"))
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// token exchanges a code, once, for an ID token.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, "invalid_request")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != p.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(p.ClientSecret)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="oidcfake"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	code := r.PostForm.Get("code")
	p.mu.Lock()
	g, found := p.codes[code]
	delete(p.codes, code)
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case r.PostForm.Get("grant_type") != "authorization_code", !found:
		oauthError(w, "invalid_grant")
		return
	case r.PostForm.Get("redirect_uri") != g.redirect:
		oauthError(w, "invalid_grant")
		return
	case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		oauthError(w, "invalid_grant") // the PKCE verifier does not match
		return
	}
	now := p.Now()
	claims := map[string]any{"iss": p.URL, "sub": "user-1", "aud": g.clientID, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	if g.nonce != "" {
		claims["nonce"] = g.nonce
	}
	for k, v := range g.claims {
		claims[k] = v
	}
	p.mu.Lock()
	if p.tweak != nil {
		p.tweak(claims)
	}
	p.issued++
	p.mu.Unlock()
	idToken, err := p.sign(claims)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": random(), "token_type": "Bearer", "expires_in": 300, "id_token": idToken})
}

func (p *Provider) sign(claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: p.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", p.kid))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}

func oauthError(w http.ResponseWriter, code string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func random() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
