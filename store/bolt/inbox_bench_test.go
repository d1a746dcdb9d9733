package bolt_test

import (
	"path/filepath"
	"testing"

	"github.com/askbridge/askbridge/store/bolt"
	"github.com/askbridge/askbridge/store/storetest"
)

// BenchmarkOpenPage is the inbox's read (see storetest.BenchOpenPage), on
// a file written without fsync.
func BenchmarkOpenPage(b *testing.B) {
	s, err := bolt.Open(filepath.Join(b.TempDir(), "askbridge.db"), bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	storetest.BenchOpenPage(b, s)
}
