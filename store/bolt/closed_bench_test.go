package bolt_test

import (
	"path/filepath"
	"testing"

	"github.com/askbridge/askbridge/store/bolt"
	"github.com/askbridge/askbridge/store/storetest"
)

// BenchmarkSearchClosed is a page of a search of the history (see
// storetest.BenchSearchClosed), on a file written without fsync.
func BenchmarkSearchClosed(b *testing.B) {
	s, err := bolt.Open(filepath.Join(b.TempDir(), "search.db"), bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	storetest.BenchSearchClosed(b, s)
}
