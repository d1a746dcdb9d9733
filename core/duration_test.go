package core_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Every door reads durations with ParseDuration, so the forms the YAML
// took ("30d"), the forms MCP took ("1d12h") and Go's own all read the
// same everywhere.
func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"90s": 90 * time.Second, "30m": 30 * time.Minute, "2h": 2 * time.Hour, "1d": 24 * time.Hour,
		" 1D ": 24 * time.Hour, "1h30m": 90 * time.Minute, "1d12h": 36 * time.Hour, "30d": 30 * 24 * time.Hour,
		"0s": 0, "0d": 0, "250ms": 250 * time.Millisecond, "1d1ms": 24*time.Hour + time.Millisecond,
	} {
		if got, err := core.ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "soon", "-5m", "+5m", "1.5d", "d", "2 hours", "1dd", "-1d", "01d", "3651d", "1d-1h", "1d+1h", "99999999999999999999d", "1d2562047h"} {
		if d, err := core.ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v; want a refusal", in, d)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	var v struct{ T core.Duration }
	if err := json.Unmarshal([]byte(`{"T":"1d12h"}`), &v); err != nil || time.Duration(v.T) != 36*time.Hour {
		t.Fatalf("1d12h read as %v, %v", v.T, err)
	}
	if err := json.Unmarshal([]byte(`{"T":3600000000000}`), &v); err != nil || time.Duration(v.T) != time.Hour {
		t.Fatalf("nanoseconds read as %v, %v", v.T, err)
	}
	if err := json.Unmarshal([]byte(`{"T":"soon"}`), &v); err == nil || !strings.Contains(err.Error(), `"soon" is not a duration`) {
		t.Fatalf("soon: %v; want a refusal naming the value", err)
	}
	b, _ := json.Marshal(core.Duration(90 * time.Minute))
	if string(b) != `"1h30m0s"` {
		t.Fatalf("marshal = %s", b)
	}
}
