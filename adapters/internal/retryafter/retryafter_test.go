package retryafter_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/retryafter"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{"0", 0},
		{"-5", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		// Capped: a day asked is an hour waited, and a number that would
		// overflow a duration is no negative wait.
		{"86400", retryafter.Max},
		{"9300000000000", retryafter.Max},
		{now.Add(48 * time.Hour).Format(http.TimeFormat), retryafter.Max},
	} {
		h := http.Header{}
		if c.value != "" {
			h.Set("Retry-After", c.value)
		}
		if got := retryafter.Parse(h, now); got != c.want {
			t.Errorf("Retry-After %q: %s, want %s", c.value, got, c.want)
		}
	}
}
