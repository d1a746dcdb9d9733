package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// configMap is a directory laid out as Kubernetes lays out a ConfigMap
// volume: askbridge.yaml is a link to ..data/askbridge.yaml, ..data a
// link to a dated directory holding the file, and an update makes a new
// dated directory and swaps ..data to it by rename.
type configMap struct {
	dir     string
	version int
}

// newConfigMap mounts yaml as a ConfigMap's first version in dir.
func newConfigMap(t *testing.T, dir, yaml string) *configMap {
	t.Helper()
	c := &configMap{dir: dir}
	c.mount(t, yaml)
	if err := os.Symlink(c.dated(), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..data", "askbridge.yaml"), c.link()); err != nil {
		t.Fatal(err)
	}
	return c
}

// link is the file's path in the volume (the link a pod reads).
func (c *configMap) link() string { return filepath.Join(c.dir, "askbridge.yaml") }

// dated is the name of the dated directory of the version mounted last.
func (c *configMap) dated() string {
	return fmt.Sprintf("..2026_12_04_22_%02d_00.%d", 5*c.version, c.version)
}

// file is the file of the version mounted last.
func (c *configMap) file() string { return filepath.Join(c.dir, c.dated(), "askbridge.yaml") }

// mount writes yaml as the next version's dated directory.
func (c *configMap) mount(t *testing.T, yaml string) {
	t.Helper()
	c.version++
	if err := os.Mkdir(filepath.Join(c.dir, c.dated()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.file(), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// update mounts yaml and swaps ..data to it, as the kubelet does.
func (c *configMap) update(t *testing.T, yaml string) {
	t.Helper()
	c.mount(t, yaml)
	tmp := filepath.Join(c.dir, "..data_tmp")
	if err := os.Symlink(c.dated(), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// TestReloadSeesAConfigMapBehindALink: ASKBRIDGE_CONFIG a link from
// another directory to a ConfigMap's file (a path the image expects,
// pointing into the volume): each update of the ConfigMap is read
// without SIGHUP, the second too, after the first led the way through a
// new dated directory. Before, only the link's own directory was
// watched, and an update was read on SIGHUP alone.
func TestReloadSeesAConfigMapBehindALink(t *testing.T) {
	v1 := reloadYAML("ops-one", "")
	cm := newConfigMap(t, t.TempDir(), v1)
	config := filepath.Join(t.TempDir(), "askbridge.yaml")
	if err := os.Symlink(cm.link(), config); err != nil {
		t.Fatal(err)
	}
	r := startReloading(t, nil, config, cm.file(), v1)
	versions := []string{reloadYAML("ops-two", ""), reloadYAML("ops-two", "  billing:\n    deciders:\n      api: [ops-one]\n")}
	for i, v := range versions {
		cm.update(t, v)
		r.waitRead(t, v)
		if d := r.digest(t, r.m.AdminToken); d.Digest != digestOf(v) || d.Refused != nil {
			t.Fatalf("update %d: the digest endpoint says %+v; want it applied", i+1, d)
		}
	}
	evs := reloads(t, r.m)
	if len(evs) != len(versions) {
		t.Fatalf("%d reconfigured events, want %d", len(evs), len(versions))
	}
	for i, e := range evs {
		if rec := reloadOf(t, e); rec.Trigger != "file" || !rec.Applied || rec.Digest != digestOf(versions[i]) {
			t.Errorf("reconfigured event %d: %+v; want update %d applied on the file's change", i, rec, i+1)
		}
	}
}

// TestReloadSeesAFileBehindALink: ASKBRIDGE_CONFIG a link to a file in
// another directory: the file edited there is read without SIGHUP, and so
// is a new file after its directory was removed and made again (the
// removal refused, as a missing file is). Before, only the link's
// directory was watched, and neither was read until SIGHUP.
func TestReloadSeesAFileBehindALink(t *testing.T) {
	r := startBehindLink(t, nil, reloadYAML("ops-one", ""))
	v2 := reloadYAML("ops-two", "")
	if err := os.WriteFile(r.file, []byte(v2), 0o600); err != nil {
		t.Fatal(err)
	}
	r.waitRead(t, v2)
	if d := r.digest(t, r.m.AdminToken); d.Digest != digestOf(v2) || d.Refused != nil {
		t.Fatalf("the file edited: the digest endpoint says %+v; want it applied", d)
	}

	dir := filepath.Dir(r.file)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	r.waitRead(t, "") // refused as the digest of nothing
	v3 := reloadYAML("ops-one", "  billing:\n    deciders:\n      api: [ops-two]\n")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.file, []byte(v3), 0o600); err != nil {
		t.Fatal(err)
	}
	r.waitRead(t, v3)
	if d := r.digest(t, r.m.AdminToken); d.Digest != digestOf(v3) || d.Refused != nil {
		t.Fatalf("the directory made again: the digest endpoint says %+v; want the new file applied", d)
	}
}
