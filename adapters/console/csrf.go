package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
)

// A session's CSRF token never goes out as it is. Pages are gzipped
// (render) and echo what the request said (an inbox's filters) beside
// the token, which is what a compression side channel (BREACH) needs: a
// page that guesses the token's next character in a filter comes back a
// little shorter when the guess is right. So every response serves the
// token under a fresh one-time mask, mask || (mask XOR token) in
// base64url; the bytes differ in every response, and no run of guesses
// converges. A post is checked by unmasking what it carries and
// comparing that with the session's token (csrfOK).
//
// Only a masked copy is taken. The token as it is, which pages served
// before they masked it, is refused like any wrong token: a page left
// open across an upgrade (or drawn by a replica of the old version
// during a rolling one) has its next post refused once with "reload the
// page", and what was typed in it is kept (kept.js). Accepting it would
// not spare that in a mixed fleet, as an old replica refuses a masked
// token anyway, and would keep the raw token, the very thing a side
// channel could read from an old replica's pages, good for the whole
// session.

// masked is the session's token as one response serves it; "" for a
// token this console did not mint, which no post can then match.
func masked(token string) string {
	raw := tokenOf(token)
	if raw == nil {
		return ""
	}
	out := make([]byte, 2*tokenBytes)
	_, _ = rand.Read(out[:tokenBytes]) // crypto/rand does not fail on supported platforms
	subtle.XORBytes(out[tokenBytes:], out[:tokenBytes], raw)
	return base64.RawURLEncoding.EncodeToString(out)
}

// unmasked is the token a masked field carries, or nil for a field of
// any other shape (a raw token among them).
func unmasked(field string) []byte {
	b, err := base64.RawURLEncoding.Strict().DecodeString(field)
	if err != nil || len(b) != 2*tokenBytes {
		return nil
	}
	subtle.XORBytes(b[tokenBytes:], b[:tokenBytes], b[tokenBytes:])
	return b[tokenBytes:]
}

// csrfOK says whether the form's csrf field is a masking of want, the
// session's token, comparing in constant time. A malformed field is
// refused as a wrong one is, by the same caller's same words.
func (s *Server) csrfOK(r *http.Request, want string) bool {
	got, raw := unmasked(csrfField(r)), tokenOf(want)
	return got != nil && raw != nil && subtle.ConstantTimeCompare(got, raw) == 1
}

// signInTokenOK says whether the sign-in form's csrf field is want, its
// cookie's token, as it is. The sign-in form is not masked: its cookie is
// SameSite=Strict, so no request another site makes carries it, and every
// sign-in page such a request gets holds a token minted for it alone
// (signInPage), with nothing for a side channel to converge on.
func (s *Server) signInTokenOK(r *http.Request, want string) bool {
	got := csrfField(r)
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// csrfField is the posted form's csrf field, read up to maxForm.
func csrfField(r *http.Request) string {
	r.Body = http.MaxBytesReader(nil, r.Body, maxForm) // a no-op after formRead
	return r.PostFormValue("csrf")
}

// viewer is whom a page is drawn for, with the session's token masked
// afresh for this response.
func (sess *session) viewer() viewer {
	return viewer{Account: sess.account, CSRF: masked(sess.CSRF)}
}
