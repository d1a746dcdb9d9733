package metrics_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/metrics"
	"github.com/askbridge/askbridge/core"
)

// TestDeliveryHelpSaysWhatIsCounted: the program counts the deliveries
// of every outbox (core.OutboxSurfaces: the chat surfaces, and the
// webhook's calls to callback URLs), and a delivery is rate_limited
// whenever a surface asked it to wait, which is not always a 429 (an
// SMTP relay's deferral, a webhook receiver's 503). The help a dashboard
// shows says so. Before, deliveries_total said "to chat platforms" over
// a series for the webhook, and platform_retry_after_seconds said "429"
// over email's deferrals and a receiver's 503s.
func TestDeliveryHelpSaysWhatIsCounted(t *testing.T) {
	m := metrics.New("dev", metrics.Source{Surfaces: core.OutboxSurfaces})
	m.Delivered(core.SurfaceWebhook, core.DeliveryRateLimited, 30*time.Second)
	m.Delivered(core.SurfaceEmail, core.DeliveryRateLimited, 5*time.Minute)
	fams := gather(t, m)
	if fams["askbridge_deliveries_total"] != 2 || fams["askbridge_platform_retry_after_seconds"] != 2 {
		t.Fatalf("deliveries %v, retry-after observations %v; want 2 and 2",
			fams["askbridge_deliveries_total"], fams["askbridge_platform_retry_after_seconds"])
	}
	for family, want := range map[string]string{
		"askbridge_deliveries_total": "Delivery attempts from the outbox, by surface (the chat surfaces' cards, edits, " +
			"reminders and digests; webhook: calls to callback URLs) and result: sent; retried (failed, due again later); " +
			"rate_limited (asked to wait: see platform_retry_after_seconds); given_up (dropped: refused for good, or out of attempts).",
		"askbridge_platform_retry_after_seconds": "Deliveries a surface asked to wait, and the wait asked for, by surface: " +
			"a 429's Retry-After (on Discord, also what is left of a wait asked of the whole bot, which holds back every send), " +
			"an SMTP relay's deferral (email), a webhook receiver's 429 or 503 with Retry-After.",
	} {
		if got := familyHelp(t, m, family); got != want {
			t.Errorf("%s help:\n%s\nwant:\n%s", family, got, want)
		}
	}
}

// familyHelp is family's help as gathered.
func familyHelp(t *testing.T, m *metrics.Metrics, family string) string {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == family {
			return f.GetHelp()
		}
	}
	t.Fatalf("no family %s", family)
	return ""
}
