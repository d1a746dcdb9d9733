package webhook

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is the replay window Verify is meant to be used with:
// a webhook signed longer ago (or further ahead, for a skewed clock) than
// this is refused, so a captured request cannot be played again later.
const DefaultTolerance = 5 * time.Minute

// VerifyTarget checks a webhook received at target, the callback URL
// exactly as the receiver gave it to askbridge (in its ask, or as its
// route's callback_url), the way the package doc says: the timestamp is
// within tolerance of now, and one of the signature header's "v3=" values
// is the hex HMAC-SHA256 under secret of the event id (HeaderID), ".",
// the timestamp, ".", target, a line break, and body (the raw bytes,
// before any parsing). A receiver then processes the event id once,
// dropping repeats. A request signed for another URL is refused, though
// the secret is the same: a receiver sharing webhooks.secret with others
// is not made to take what was sent to them.
func VerifyTarget(secret []byte, target string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	if target == "" {
		return errors.New("webhook: no callback URL to verify for")
	}
	ts, err := fresh(secret, h, now, tolerance)
	if err != nil {
		return err
	}
	return oneOf(h, "v3=", signTarget(secret, body, h.Get(HeaderID), ts, target))
}

// Verify checks a received webhook as VerifyTarget does, but by its
// "v2=" values, which leave the callback URL out: the timestamp is within
// tolerance of now, and a v2 value is the hex HMAC-SHA256 under secret of
// the event id (HeaderID), ".", the timestamp, ".", and body. It is for
// receivers whose secret signs for them alone (a route's webhook_secret,
// an agent token's); one that shares its secret (webhooks.secret) takes
// through it a request sent to any other, and is to use VerifyTarget.
// The v1 values are not enough for either: they leave the id out, so a
// replay under a new id, v2 stripped, would pass them and the dedupe.
// An empty secret (an unset environment variable, say) is refused: a
// signature under the empty key is one anyone can make.
func Verify(secret []byte, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := fresh(secret, h, now, tolerance)
	if err != nil {
		return err
	}
	return oneOf(h, "v2=", sign(secret, body, h.Get(HeaderID), ts))
}

// fresh checks what every version needs before its signature: a secret,
// and a timestamp within tolerance of now, which it returns.
func fresh(secret []byte, h http.Header, now time.Time, tolerance time.Duration) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("webhook: no secret to verify with; a signature under an empty key proves nothing")
	}
	ts := h.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "", fmt.Errorf("webhook: %s %q is not Unix seconds", HeaderTimestamp, ts)
	}
	if age := now.Sub(time.Unix(sec, 0)); age > tolerance || age < -tolerance {
		return "", fmt.Errorf("webhook: signed %s from now, outside the %s replay window", age.Round(time.Second), tolerance)
	}
	return ts, nil
}

// oneOf checks that one of the signature header's values of version
// prefix ("v3=") is want.
func oneOf(h http.Header, prefix, want string) error {
	for v := range strings.SplitSeq(h.Get(HeaderSignature), ",") {
		if got, ok := strings.CutPrefix(strings.TrimSpace(v), prefix); ok && hmac.Equal([]byte(got), []byte(want)) {
			return nil
		}
	}
	return errors.New("webhook: the signature does not match")
}
