package ntfy

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// TestRefusalReadsRetryAfterAsADate: a 429 whose Retry-After is an HTTP
// date waits until then, as one in seconds does; before, only seconds
// were read, and a date fell back to five seconds.
func TestRefusalReadsRetryAfterAsADate(t *testing.T) {
	res := &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Header: http.Header{}}
	res.Header.Set("Retry-After", time.Now().Add(2*time.Minute).UTC().Format(http.TimeFormat))
	var ra *core.RetryAfter
	if err := refusal(res, []byte(`{"error":"limit reached"}`)); !errors.As(err, &ra) || ra.After < time.Minute || ra.After > 2*time.Minute {
		t.Fatalf("a 429 to wait two minutes: %v (%+v)", err, ra)
	}
}
