package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestReloadFileRestoredClearsTheRefusal: a configuration file deleted
// (refused: there is no file) and put back as it was is read again, and
// the digest endpoint and the event log say the file in force is on
// disk again. Before, a file whose bytes were the ones in force was not
// read at all, so the endpoint went on saying, until the next change,
// that this replica had refused its file for not existing, and the last
// reconfigured event said so too.
func TestReloadFileRestoredClearsTheRefusal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "askbridge.yaml")
	good := reloadYAML("ops-one", "")
	r := startReloading(t, nil, file, file, good)

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	r.waitRead(t, "") // a file that cannot be read is refused as the digest of nothing
	if d := r.digest(t, r.m.AdminToken); d.Refused == nil || !strings.Contains(d.Refused.Error, "no such file") {
		t.Fatalf("after the delete: %+v; want it refused for the missing file", d)
	}

	if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	var d client.ConfigDigest
	if !apptest.ScrapesUntil(10*time.Second, func() bool {
		d = r.digest(t, r.m.AdminToken)
		return d.Refused == nil
	}) {
		t.Fatalf("the file put back as it was: the endpoint says %+v (refused: %+v); want no refusal", d, d.Refused)
	}
	if d.Digest != digestOf(good) {
		t.Fatalf("digest %s, want the good file's", d.Digest)
	}
	evs := reloads(t, r.m)
	if len(evs) < 2 {
		t.Fatalf("%d reconfigured events; want the refusal and the reading of the file put back", len(evs))
	}
	if last := reloadOf(t, evs[len(evs)-1]); !last.Applied || last.Digest != digestOf(good) || len(last.Changed) != 0 {
		t.Fatalf("the last reconfigured event: %+v; want the good file applied, changing nothing", last)
	}
}
