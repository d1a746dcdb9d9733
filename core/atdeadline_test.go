package core_test

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestAtDeadlineIsWhatTheNextDeadlineDoes: the one rule of a deadline,
// which the ticker follows and the console tells ahead: an escalation
// once, and only while there is a route to escalate to; asking again
// while asks are left; else the close as timed out.
func TestAtDeadlineIsWhatTheNextDeadlineDoes(t *testing.T) {
	for _, c := range []struct {
		name      string
		q         core.Question
		escalates bool
		want      core.TimeoutPolicy
	}{
		{"deny", core.Question{OnTimeout: core.OnTimeoutDeny}, true, core.OnTimeoutDeny},
		{"escalate, not yet", core.Question{OnTimeout: core.OnTimeoutEscalate}, true, core.OnTimeoutEscalate},
		{"escalate, nowhere to", core.Question{OnTimeout: core.OnTimeoutEscalate}, false, core.OnTimeoutDeny},
		{"escalated already", core.Question{OnTimeout: core.OnTimeoutEscalate, Renotified: 1}, true, core.OnTimeoutDeny},
		{"reask, asks left", core.Question{OnTimeout: core.OnTimeoutReask, MaxReasks: 2, Renotified: 1}, false, core.OnTimeoutReask},
		{"reask, none left", core.Question{OnTimeout: core.OnTimeoutReask, MaxReasks: 2, Renotified: 2}, true, core.OnTimeoutDeny},
	} {
		if got := core.AtDeadline(&c.q, c.escalates); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
