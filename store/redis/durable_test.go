package redis

import "testing"

// TestWaitAOFNeedsSevenTwoAndAOF reads INFO as Redis and Valkey write it:
// WAITAOF only from 7.2 with appendonly on.
func TestWaitAOFNeedsSevenTwoAndAOF(t *testing.T) {
	for info, want := range map[string]bool{
		"# Server\r\nredis_version:7.0.15\r\n# Persistence\r\naof_enabled:1\r\n": false,
		"# Server\r\nredis_version:7.2.4\r\n# Persistence\r\naof_enabled:1\r\n":  true,
		"# Server\r\nredis_version:7.2.4\r\n# Persistence\r\naof_enabled:0\r\n":  false,
		"# Server\r\nredis_version:8.0.1\r\naof_enabled:1\r\n":                   true,
		"# Server\r\nredis_version:6.2.14\r\naof_enabled:1\r\n":                  false,
		"aof_enabled:1\r\n": false,
	} {
		if got := waitAOFIn(info); got != want {
			t.Errorf("%q: %v, want %v", info, got, want)
		}
	}
}

func TestMarkerKeySharesTheSlot(t *testing.T) {
	for key, want := range map[string]string{
		"{ab:s3}:q:abc": "{ab:s3}:durable",
		"plain":         "{plain}:durable",
	} {
		if got := markerKey(key); got != want || slot(got) != slot(key) {
			t.Errorf("markerKey(%q) = %q (slot %d), want %q (slot %d)", key, got, slot(got), want, slot(key))
		}
	}
}
