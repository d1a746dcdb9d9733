package app_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReloadSeesAChangeMadeWhileStarting: a file changed after serve
// read it and before it watched it (while it opened its store, which on
// Redis may take a while) is read once the watch is on, with no other
// change or SIGHUP to prompt it. Before, the replica ran the file it had
// read at start until the next change, while the others ran the new one.
func TestReloadSeesAChangeMadeWhileStarting(t *testing.T) {
	file := filepath.Join(t.TempDir(), "askbridge.yaml")
	changed := reloadYAML("ops-two", "")
	r := startReloadingAfter(t, nil, file, file, reloadYAML("ops-one", ""), func() {
		if err := os.WriteFile(file, []byte(changed), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	r.waitRead(t, changed)
	if d := r.digest(t, r.m.AdminToken); d.Digest != digestOf(changed) || d.Refused != nil {
		t.Fatalf("the digest endpoint says %+v; want the changed file in force", d)
	}
	q := askOn(t, r.m.URL, "deploy")
	if code := answerAs(t, r.m.URL, reloadOpsTwo, q.ID); code != 200 {
		t.Fatalf("the changed file's decider answered: %d; want 200", code)
	}
}
