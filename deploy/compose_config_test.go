package deploy_test

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
)

// TestComposeMountsConfigDirectory: the configuration file reaches the
// container through a bind mount of a directory of its own, read-only,
// never as a single file. A single file bind-mounted (a compose config
// from file: is one) pins the file's inode: an editor that saves by
// writing a new file and renaming it over the old one (vim, sed -i, the
// README's "write it elsewhere and mv it into place") leaves the container
// reading the old text forever, and serve's reload, which watches the
// directory, never sees the change. Nor may the directory be deploy/
// itself, which holds .env and its secrets.
func TestComposeMountsConfigDirectory(t *testing.T) {
	root, _ := filepath.Abs("..")
	deployDir := filepath.Join(root, "deploy")
	for _, files := range [][]string{{"compose.yaml"}, {"compose.yaml", "compose.sentinel.yaml"}} {
		ab := loadComposeFiles(t, files).Services["askbridge"]
		cfgPath := ab.Environment["ASKBRIDGE_CONFIG"]
		if cfgPath == nil || !path.IsAbs(*cfgPath) {
			t.Fatalf("%v: ASKBRIDGE_CONFIG %v is not an absolute path", files, cfgPath)
		}
		for _, c := range ab.Configs {
			t.Errorf("%v: config %s is mounted as a single file at %s; its edits by rename never reach the container", files, c.Source, c.Target)
		}
		var mount *types.ServiceVolumeConfig
		for i, v := range ab.Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			if fi, err := os.Stat(v.Source); err == nil && !fi.IsDir() {
				t.Errorf("%v: %s is bind-mounted as a single file at %s", files, v.Source, v.Target)
			}
			if v.Target == path.Dir(*cfgPath) {
				mount = &ab.Volumes[i]
			}
		}
		if mount == nil {
			t.Errorf("%v: no directory is bind-mounted at %s, where ASKBRIDGE_CONFIG (%s) points: %+v", files, path.Dir(*cfgPath), *cfgPath, ab.Volumes)
			continue
		}
		if !mount.ReadOnly {
			t.Errorf("%v: the config directory %s is mounted writable", files, mount.Source)
		}
		if mount.Source == deployDir || mount.Source == root {
			t.Errorf("%v: the config directory is %s, which holds .env", files, mount.Source)
		}
		entries, err := os.ReadDir(mount.Source)
		if err != nil {
			t.Errorf("%v: %v", files, err)
			continue
		}
		found := false
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".env") {
				t.Errorf("%v: the config directory %s holds %s", files, mount.Source, e.Name())
			}
			found = found || (e.Name() == path.Base(*cfgPath) && e.Type().IsRegular())
		}
		if !found {
			t.Errorf("%v: %s has no file %s for ASKBRIDGE_CONFIG", files, mount.Source, path.Base(*cfgPath))
		}
	}
}
