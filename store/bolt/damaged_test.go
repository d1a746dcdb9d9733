package bolt_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store/bolt"
)

// seededFile writes a store file of a few megabytes (a thousand
// questions) and returns its path and size.
func seededFile(t *testing.T) (string, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "askbridge.db")
	s, err := bolt.Open(path, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		q := question(0, core.Reversible)
		q.Text = strings.Repeat("x", 500)
		mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, fi.Size()
}

// TestOpenRefusesADamagedFile: a store file cut short, or with garbage
// over its middle, is refused at Open with an error naming the file and
// the tool that says where it is damaged. Before, the cut file panicked
// inside Open, and the garbage was opened and panicked at the first read
// of it, on whichever loop made it, taking the process down.
func TestOpenRefusesADamagedFile(t *testing.T) {
	for name, damage := range map[string]func(path string, size int64) error{
		"cut in half": func(path string, size int64) error { return os.Truncate(path, size/2) },
		"garbage in the middle": func(path string, size int64) error {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt(bytes.Repeat([]byte{0xff}, int(size/4)), size*3/8)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			path, size := seededFile(t)
			if err := damage(path, size); err != nil {
				t.Fatal(err)
			}
			s, err := bolt.Open(path, bolt.Options{})
			if err == nil {
				s.Close()
				t.Fatalf("a damaged file was opened")
			}
			for _, want := range []string{"the store file " + path + " is damaged", "bbolt check " + path} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestOpenRefusesAnEmptyFile: an existing file of no bytes (a copy cut
// short, a disk that filled) is refused rather than made into a new,
// empty store, which would start over without a word about what was
// lost.
func TestOpenRefusesAnEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "askbridge.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := bolt.Open(path, bolt.Options{})
	if err == nil {
		s.Close()
		t.Fatal("an empty file was opened as a new store")
	}
	if want := path + " exists but is empty; move it away to start a new store"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
