package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/guard"
	"github.com/askbridge/askbridge/core"
)

// Cookie names. The session cookie names a session in the store; the
// sign-in cookie carries the CSRF token of the sign-in form, before there
// is a session to hold one.
const (
	sessionCookie = "askbridge_session"
	signinCookie  = "askbridge_signin"
)

// session is what the store keeps of a signed-in browser, under a digest
// of its cookie, so a copy of the store holds no usable cookie.
type session struct {
	Name    string    `json:"name"`
	Stamp   string    `json:"stamp"`
	CSRF    string    `json:"csrf"`
	Created time.Time `json:"created"`
	Seen    time.Time `json:"seen"`
	// Away is the token's previous visit, set at sign-in and cleared once
	// the "while you were away" banner has been shown.
	Away time.Time `json:"away,omitzero"`
	// Via is "oidc" for a session the identity provider made (oidc.go):
	// its Person and the Role its groups granted are kept here, as no
	// token holds them.
	Via    string `json:"via,omitempty"`
	Person string `json:"person,omitempty"`
	Role   Role   `json:"role,omitempty"`

	key     string  // store key, not stored
	account Account // as configured now, not stored
}

func sessionKey(cookie string) string {
	sum := sha256.Sum256([]byte(cookie))
	return "console:session:" + hex.EncodeToString(sum[:])
}

func visitKey(name string) string { return "console:visit:" + name }

// signedOutKey marks the session kept under key as signed out, for as
// long as it could have lived (signOut), so that no write of a request
// already in flight brings it back (keep, load).
func signedOutKey(key string) string {
	return "console:signedout:" + strings.TrimPrefix(key, "console:session:")
}

// tokenBytes is how much randomness a randomToken holds.
const tokenBytes = 32

// minted says whether v has the shape of a randomToken.
func minted(v string) bool { return tokenOf(v) != nil }

// tokenOf is the bytes of a randomToken, or nil for anything of another
// shape.
func tokenOf(v string) []byte {
	b, err := base64.RawURLEncoding.Strict().DecodeString(v)
	if err != nil || len(b) != tokenBytes {
		return nil
	}
	return b
}

func randomToken() string {
	var b [tokenBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// current returns the request's live session, or nil. A session whose
// token is gone, has a new secret or became an agent's, or that is older
// than the maximum age, reads as none. Use moves its idle expiry and
// records the account's last visit, at most every renewEvery, so a busy
// page does not write on every request, but never its age. A page's
// background fetch is no use (background): it is checked, never renewed,
// so a tab left open still idles out, and "while you were away" counts
// from the person's last act. A renewal that a sign-out overtook (keep)
// reads as none and sends no cookie.
func (s *Server) current(w http.ResponseWriter, r *http.Request) (*session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, nil
	}
	sess, err := s.load(r.Context(), sessionKey(c.Value))
	if sess == nil || err != nil {
		return nil, err
	}
	if now := s.now(); !background(r) && now.Sub(sess.Seen) >= s.renewEvery() {
		sess.Seen = now
		if live, err := s.keep(r.Context(), sess); err != nil || !live {
			return nil, err
		}
		if err := s.values.SetValue(r.Context(), visitKey(sess.Name), now.UTC().Format(time.RFC3339Nano)); err != nil {
			// The session is renewed; only the next sign-in's "since you
			// were away" starts earlier than it should.
			s.log.Warn().Err(err).Msg("console: the last visit was not recorded")
		}
		s.setCookie(w, r, sessionCookie, c.Value, s.idle)
	}
	return sess, nil
}

// load reads the session kept under key and returns it if it is live, or
// nil: a session whose token is gone, has a new secret or became an
// agent's, or that is older than the maximum age, is deleted and reads as
// none, as does one signed out (gone from the store) or idle too long
// (expired there). It changes nothing of a live one: current renews it
// for a person's request, and a stream asks load alone as it goes
// (stillLive), since an open page is no use of the session.
func (s *Server) load(ctx context.Context, key string) (*session, error) {
	raw, err := s.values.Value(ctx, key)
	if err != nil || raw == "" {
		return nil, err
	}
	if out, err := s.values.Value(ctx, signedOutKey(key)); err != nil || out != "" {
		if out != "" {
			_ = s.values.DeleteValue(ctx, key) // written back by a request that began before the sign-out
		}
		return nil, err
	}
	var sess session
	if json.Unmarshal([]byte(raw), &sess) != nil {
		return nil, nil // unreadable: treat as signed out
	}
	acct, ok := s.tokens.ByName(sess.Name)
	if sess.Via == viaOIDC {
		acct, ok = s.oidcAccount(sess)
	}
	if !ok || acct.Stamp != sess.Stamp || acct.Role == RoleAgent || s.now().Sub(sess.Created) >= s.maxAge {
		_ = s.values.DeleteValue(ctx, key)
		return nil, nil
	}
	sess.key, sess.account = key, acct
	return &sess, nil
}

// stillLive is the check a stream makes as it goes: the session it began
// with is still live (load), so a sign-out, or a reload that removes or
// renews its token, ends the stream too.
func (s *Server) stillLive(sess *session) func(context.Context) bool {
	return func(ctx context.Context) bool {
		live, err := s.load(ctx, sess.key)
		return err == nil && live != nil
	}
}

// renewEvery is how stale a session's last use may get before a request
// renews it: a small part of the idle time.
func (s *Server) renewEvery() time.Duration { return min(s.idle/20, time.Minute) }

func (s *Server) save(ctx context.Context, sess *session) error {
	raw, err := json.Marshal(sess)
	if err != nil {
		return err
	}
	return s.values.SetValueFor(ctx, sess.key, string(raw), s.idle)
}

// keep writes back a session this request loaded (renewed, or changed) and
// reports whether it is still live. A sign-out between the load and the
// write has marked it (signOut writes the mark before it deletes, and
// keep reads the mark after it writes, so one of them sees the other):
// then keep deletes what it wrote, and the request goes on signed out.
func (s *Server) keep(ctx context.Context, sess *session) (bool, error) {
	if err := s.save(ctx, sess); err != nil {
		return false, err
	}
	out, err := s.values.Value(ctx, signedOutKey(sess.key))
	if err != nil {
		return false, err
	}
	if out != "" {
		return false, s.values.DeleteValue(ctx, sess.key)
	}
	return true, nil
}

// unrenew takes back a renewal's session cookie that current set for
// this response, once a later write (keep) found the session signed out.
func unrenew(w http.ResponseWriter) {
	h := w.Header()
	var kept []string
	for _, c := range h.Values("Set-Cookie") {
		if !strings.HasPrefix(c, sessionCookie+"=") {
			kept = append(kept, c)
		}
	}
	h.Del("Set-Cookie")
	for _, c := range kept {
		h.Add("Set-Cookie", c)
	}
}

// setCookie sets (life > 0) or clears (life < 0) one of the console's
// cookies. The session cookie is SameSite=Lax, so that a link to a
// question or a filtered inbox followed from chat or mail (another site)
// opens in the session the browser has, rather than the sign-in page and a
// second session. Lax is safe here because no GET changes anything: every
// state change is a POST that needs the session's CSRF token (signedIn,
// csrfOK) and passes the same-origin check (ServeHTTP's
// CrossOriginProtection), and a Lax cookie is not sent on another site's
// POST at all. The sign-in form's cookie is never needed on arrival from
// elsewhere, so it stays Strict.
func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, name, value string, life time.Duration) {
	site := http.SameSiteStrictMode
	if name == sessionCookie {
		site = http.SameSiteLaxMode
	}
	c := &http.Cookie{
		Name: name, Value: value, Path: "/",
		HttpOnly: true, SameSite: site, Secure: secure(r),
		MaxAge: int(life / time.Second),
	}
	if life < 0 {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// signedIn runs h for a request with a live session; without one, a page
// gets the sign-in form (401) and anything else a bare 401. A state change
// also needs the session's CSRF token.
func (s *Server) signedIn(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.current(w, r)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		if sess == nil {
			switch {
			case r.Method != http.MethodGet:
				s.forbidden(w, r, "You are signed out, so nothing changed. Sign in and try again.")
			case background(r):
				http.Error(w, "signed out", http.StatusUnauthorized) // the page reloads itself on this
			default:
				s.signInPage(w, r, http.StatusUnauthorized, "", r.URL.RequestURI())
			}
			return
		}
		if r.Method != http.MethodGet && !s.formRead(w, r) {
			return
		}
		if r.Method != http.MethodGet && !s.csrfOK(r, sess.CSRF) {
			s.forbidden(w, r, "This form had no valid CSRF token, so it was refused and nothing changed. Reload the page and try again.")
			return
		}
		h(w, r, sess)
	}
}

// background reports whether r is one of the fetches an open page makes
// by itself as the log moves, with nobody at the keyboard: the stream
// (and its probe), an inbox row fetched again (/rows/{id}) and a
// question page's part (/q/{id}/part). Such a fetch is no use of the
// session: current checks the session for it without renewing it or
// recording a visit, and signed out it gets a bare 401 (the page reloads
// itself), not the sign-in page (signedIn).
func background(r *http.Request) bool {
	p := r.URL.Path
	return r.Method == http.MethodGet &&
		(strings.HasPrefix(p, "/rows/") || p == "/stream" || strings.HasPrefix(p, "/q/") && strings.HasSuffix(p, "/part"))
}

// maxForm caps a posted form; the longest field core takes is well below.
const maxForm = 256 << 10

// formRead reads a posted form, up to maxForm, before its CSRF token is
// looked at. A larger one is refused here as too large (413) and it
// reports false; any other fault in the form leaves it empty, and so
// without a token, as before.
func (s *Server) formRead(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(nil, r.Body, maxForm)
	var large *http.MaxBytesError
	if err := r.ParseForm(); errors.As(err, &large) {
		s.render(w, r, http.StatusRequestEntityTooLarge, "problem", map[string]any{"Status": "Too large",
			"Message": fmt.Sprintf("This form was too large for the console (more than %d KiB), so it was refused and nothing changed.", maxForm>>10)})
		return false
	}
	return true
}

// signIn exchanges a token for a session. The sign-in form carries the
// CSRF token of its cookie, so another site cannot sign a browser in to
// an account of its choosing.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if !s.formRead(w, r) {
		return
	}
	c, err := r.Cookie(signinCookie)
	if err != nil || !s.signInTokenOK(r, c.Value) {
		s.forbidden(w, r, "The sign-in form had expired, so it was refused. Reload the page and sign in again.")
		return
	}
	next := localPath(r.PostFormValue("next"))
	if wait, err := s.signInWait(r); err != nil {
		s.internal(w, r, err)
		return
	} else if wait > 0 {
		secs := guard.RetryAfter(wait)
		w.Header().Set("Retry-After", secs)
		s.signInPage(w, r, http.StatusTooManyRequests,
			fmt.Sprintf("Too many sign-in attempts from this address. Try again in %s seconds.", secs), next)
		return
	}
	acct, ok := s.tokens.BySecret(strings.TrimSpace(r.PostFormValue("token")))
	if !ok {
		s.signInPage(w, r, http.StatusUnauthorized, "That token is not one askbridge knows.", next)
		return
	}
	if acct.Role == RoleAgent {
		s.signInPage(w, r, http.StatusForbidden, "That is an agent's token. The console takes operator, observer and admin tokens.", next)
		return
	}
	if err := s.startSession(w, r, acct, ""); err != nil {
		s.internal(w, r, err)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// startSession signs the browser in as acct (via "" for a token, or
// viaOIDC): a new session in the store under a fresh cookie, so no
// cookie from before the sign-in is ever trusted (fixation).
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, acct Account, via string) error {
	ctx := r.Context()
	now := s.now()
	cookie := randomToken()
	sess := &session{Name: acct.Name, Stamp: acct.Stamp, CSRF: randomToken(), Created: now, Seen: now, key: sessionKey(cookie)}
	if via == viaOIDC {
		sess.Via, sess.Person, sess.Role = via, acct.Person, acct.Role
	}
	if prev, err := s.values.Value(ctx, visitKey(acct.Name)); err != nil {
		return err
	} else if t, err := time.Parse(time.RFC3339Nano, prev); err == nil && t.Before(now) {
		sess.Away = t
	}
	if err := s.save(ctx, sess); err != nil {
		return err
	}
	if err := s.values.SetValue(ctx, visitKey(acct.Name), now.UTC().Format(time.RFC3339Nano)); err != nil {
		return err
	}
	s.setCookie(w, r, sessionCookie, cookie, s.idle)
	s.setCookie(w, r, signinCookie, "", -1)
	return nil
}

// signInWait spends one attempt from the budget of r's client address and
// says how long until it has one, 0 if it had. The address is the peer's,
// or the one a trusted proxy says it forwarded (guard.ClientAddr, as the
// API's budget of wrong tokens reads it).
func (s *Server) signInWait(r *http.Request) (time.Duration, error) {
	return guard.Limiter{Budget: s.signIns, Key: "console:signin:", Limit: SignInLimit, Proxies: s.proxies}.Spend(r.Context(), r)
}

// localPath keeps a sign-in's way back to the page that asked for it
// within this site: a path of ours, never another host ("//evil",
// "/\\evil", or "/\t/evil", which browsers read as "//evil" once they
// drop the tab).
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsRune(p, '\\') {
		return "/"
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return "/"
		}
	}
	return p
}

// signOut ends the session in the store, for every replica at once. It
// marks the session signed out first, for the longest the session could
// have lived, so that a request already in flight cannot write it back
// (keep, load).
func (s *Server) signOut(w http.ResponseWriter, r *http.Request, sess *session) {
	if err := s.values.SetValueFor(r.Context(), signedOutKey(sess.key), s.now().UTC().Format(time.RFC3339Nano), s.maxAge); err != nil {
		s.internal(w, r, err)
		return
	}
	if err := s.values.DeleteValue(r.Context(), sess.key); err != nil {
		s.internal(w, r, err)
		return
	}
	s.setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// signInPage renders the sign-in form with the CSRF token of the
// browser's sign-in cookie, which it sets afresh for an hour; next is
// where a successful sign-in goes. The token is the cookie's the browser
// has, if it is one this console could have minted, so that every
// sign-in form open in the browser's tabs works, not only the last one
// loaded; else a fresh one. Sign-in clears it (startSession).
func (s *Server) signInPage(w http.ResponseWriter, r *http.Request, status int, problem, next string) {
	token := randomToken()
	if c, err := r.Cookie(signinCookie); err == nil && minted(c.Value) {
		token = c.Value
	}
	s.setCookie(w, r, signinCookie, token, time.Hour)
	data := map[string]any{"CSRF": token, "Problem": problem, "Next": localPath(next)}
	data["SSO"], data["SSOHref"] = s.oidcSignIn(next)
	s.render(w, r, status, "signin", data)
}

// decider is how a console account decides: its token name is its id
// and its name; its role lets routes say "role:operator" on the console.
// An account the identity provider signed in is "oidc:<person>", an id
// the program ties to that person, so core names the person (as on chat).
func decider(a Account) core.Decider {
	d := core.Decider{Surface: core.SurfaceConsole, ID: a.Name, Name: a.Name, Roles: a.Role.Held()}
	if a.Person != "" {
		d.Name = a.Person
	}
	return d
}
