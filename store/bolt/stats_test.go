package bolt_test

import (
	"path/filepath"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store/bolt"
	"github.com/askbridge/askbridge/store/storetest"
)

func TestOutboxStat(t *testing.T) {
	storetest.OutboxStat(t, func(t *testing.T) core.Store {
		return openAt(t, filepath.Join(t.TempDir(), "askbridge.db"), bolt.Options{})
	})
}
