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

// Verify checks a received webhook the way the README documents: the
// timestamp is within tolerance of now, and one of the signature header's
// "v2=" values is the hex HMAC-SHA256 under secret of the event id
// (HeaderID), ".", the timestamp, ".", and body (the raw bytes, before
// any parsing). A receiver then processes the event id once, dropping
// repeats. The v1 values are not enough: they leave the id out, so a
// replay under a new id, v2 stripped, would pass them and the dedupe.
// An empty secret (an unset environment variable, say) is refused: a
// signature under the empty key is one anyone can make.
func Verify(secret []byte, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	if len(secret) == 0 {
		return errors.New("webhook: no secret to verify with; a signature under an empty key proves nothing")
	}
	ts := h.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook: %s %q is not Unix seconds", HeaderTimestamp, ts)
	}
	if age := now.Sub(time.Unix(sec, 0)); age > tolerance || age < -tolerance {
		return fmt.Errorf("webhook: signed %s from now, outside the %s replay window", age.Round(time.Second), tolerance)
	}
	want := []byte(sign(secret, body, h.Get(HeaderID), ts))
	for v := range strings.SplitSeq(h.Get(HeaderSignature), ",") {
		if got, ok := strings.CutPrefix(strings.TrimSpace(v), "v2="); ok && hmac.Equal([]byte(got), want) {
			return nil
		}
	}
	return errors.New("webhook: the signature does not match")
}
