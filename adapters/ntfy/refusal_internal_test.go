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
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	res := &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Header: http.Header{}}
	res.Header.Set("Retry-After", now.Add(2*time.Minute).Format(http.TimeFormat))
	var ra *core.RetryAfter
	if err := refusal(res, []byte(`{"error":"limit reached"}`), now); !errors.As(err, &ra) || ra.After != 2*time.Minute {
		t.Fatalf("a 429 to wait two minutes: %v (%+v)", err, ra)
	}
}

// TestRefusalOfAServerErrorLeavesThePostUnknown: a 5xx may come after
// ntfy (or a proxy in front of it) published, so it is no not-sent
// error, and the retry's notice says it may be a repeat; before, it
// was, and a retry published again as if for the first time.
func TestRefusalOfAServerErrorLeavesThePostUnknown(t *testing.T) {
	for _, c := range []struct {
		status     int
		retryAfter string
	}{{http.StatusInternalServerError, ""}, {http.StatusBadGateway, ""}, {http.StatusServiceUnavailable, "30"}, {http.StatusGatewayTimeout, ""}} {
		res := &http.Response{StatusCode: c.status, Status: http.StatusText(c.status), Header: http.Header{}}
		if c.retryAfter != "" {
			res.Header.Set("Retry-After", c.retryAfter)
		}
		err := refusal(res, nil, time.Time{})
		var n *core.NotSent
		var ra *core.RetryAfter
		var p *core.Permanent
		if err == nil || errors.As(err, &n) || errors.As(err, &ra) || errors.As(err, &p) {
			t.Errorf("%d: %v (%T); want an error that leaves it unknown whether ntfy published", c.status, err, err)
		}
	}
	res := &http.Response{StatusCode: http.StatusRequestTimeout, Status: "408", Header: http.Header{}}
	var n *core.NotSent
	if err := refusal(res, nil, time.Time{}); !errors.As(err, &n) {
		t.Errorf("408, the server's own timeout before it read the request: %v; want not sent", err)
	}
}
