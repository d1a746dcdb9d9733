package app

import (
	"slices"
	"testing"
	"time"
)

// TestReloadKeepsRestartOnlySettingsWhole: a reloaded file that changes
// every setting that waits for a restart has each named and put back as
// the program started, so none applies in part. Before, the oidc section
// was named but taken: removing it dropped the people's console sign-in
// ids from core while the console kept signing them in.
func TestReloadKeepsRestartOnlySettingsWhole(t *testing.T) {
	start := File{OIDC: &OIDCFile{Issuer: "https://login.example.com", ClientID: "askbridge"}}
	start.Policies.Shards, start.Policies.OutboxIdle = 2, Duration(time.Minute)
	start.Webhooks.GiveUpAfter = Duration(24 * time.Hour)
	now := File{}
	now.Policies.Shards, now.Policies.OutboxIdle = 4, Duration(2*time.Minute)
	now.Webhooks.GiveUpAfter = Duration(time.Hour)

	got := keepStarted(start, &now)
	want := []string{"policies.shards", "policies.outbox_idle", "webhooks.give_up_after", "oidc"}
	if !slices.Equal(got, want) {
		t.Fatalf("named %v, want %v", got, want)
	}
	if again := keepStarted(start, &now); len(again) != 0 {
		t.Fatalf("after keepStarted the file still differs in %v", again)
	}
	if now.OIDC != start.OIDC {
		t.Fatalf("the oidc section after the reload: %+v, want the started one", now.OIDC)
	}
}
