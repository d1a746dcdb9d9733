package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/internal/redistest"
)

// runAll runs askbridge with stdin and returns its exit code, stdout
// and stderr.
func runAll(ctx context.Context, env func(string) string, stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := app.Run(ctx, args, env, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// allKeys is every key of the Redis, sorted.
func allKeys(t *testing.T, rc *goredis.Client) []string {
	t.Helper()
	ks, err := rc.Keys(t.Context(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ks)
	return ks
}

// TestAuditVerifyOnlyReadsRedis: `audit verify` of the store checks it
// and writes nothing. An empty database (a wrong db number, say) is not
// an askbridge store, not a log of 0 events, and stays empty; a store of
// an earlier layout, as replicas of an earlier version may still be
// running on, is refused and left unmigrated. Before, verify opened the
// store as serve does: it made a store in the empty database and
// reported "the audit chain holds: 0 events", and migrated the layout.
func TestAuditVerifyOnlyReadsRedis(t *testing.T) {
	srv := redistest.Start(t)
	rc := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	defer rc.Close()
	const auditKey = "audit-key-0123456789abcdef"
	env := func(k string) string {
		return map[string]string{"REDIS_URL": srv.URL(), "ASKBRIDGE_AUDIT_KEY": auditKey, "ASKBRIDGE_DATA_DIR": t.TempDir()}[k]
	}

	code, out, errb := runAll(t.Context(), env, "", "audit", "verify")
	if code != app.ExitError || !strings.Contains(errb, "holds no askbridge store") {
		t.Errorf("verify of an empty database: exit %d, stdout %q, stderr %q; want exit 1 and no store", code, out, errb)
	}
	if ks := allKeys(t, rc); len(ks) != 0 {
		t.Errorf("verify of an empty database wrote %d keys: %v", len(ks), ks)
	}

	m := apptest.Start(t, app.Settings{RedisURL: app.Secret(srv.URL()), AuditKey: auditKey})
	if _, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), clarify("Which region?")); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out, errb := runAll(t.Context(), env, "", "audit", "verify"); code != 0 || !strings.Contains(out, "holds: 1 event") {
		t.Fatalf("verify of the store: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	// The layout as a version before layout 2 keeps it: no key.
	if err := rc.Del(t.Context(), "{ab:s0}:layout").Err(); err != nil {
		t.Fatal(err)
	}
	before := allKeys(t, rc)
	code, out, errb = runAll(t.Context(), env, "", "audit", "verify")
	if code != app.ExitError || !strings.Contains(errb, "keeps no layout") {
		t.Errorf("verify of an earlier layout: exit %d, stdout %q, stderr %q; want exit 1 and the layout named", code, out, errb)
	}
	if v, err := rc.Get(t.Context(), "{ab:s0}:layout").Result(); err != goredis.Nil {
		t.Errorf("verify migrated the earlier layout: layout key now %q (%v)", v, err)
	}
	if after := allKeys(t, rc); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("verify of an earlier layout changed the keys:\nbefore %v\nafter  %v", before, after)
	}
}

// TestAuditVerifyOnlyReadsTheFile: on the embedded store, a data
// directory whose askbridge.db is a bbolt file of something else is no
// askbridge store, and verify leaves it as it was. Before, verify opened
// it as serve does, made the store's buckets in it and reported "the
// audit chain holds: 0 events".
func TestAuditVerifyOnlyReadsTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "askbridge.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { _, err := tx.CreateBucket([]byte("things")); return err }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_AUDIT_KEY": "audit-key-0123456789abcdef", "ASKBRIDGE_DATA_DIR": dir}[k]
	}
	code, out, errb := runAll(t.Context(), env, "", "audit", "verify")
	if code != app.ExitError || !strings.Contains(errb, "holds no askbridge store") {
		t.Errorf("verify of another bbolt file: exit %d, stdout %q, stderr %q; want exit 1 and no store", code, out, errb)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
		t.Errorf("verify changed the file it checked (%v)", err)
	}
}
