package core_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/storetest"
)

// TestChokepoint runs the store conformance suite and the behaviours of
// the close that core decides (storetest.RunDomain, which the stores do
// not run) on the embedded store from here, so that core's own tests
// drive Ask, the resolve chokepoint, the outbox loop and the ticker
// through a real store.
func TestChokepoint(t *testing.T) {
	h := storetest.Harness{
		Open:   func(t *testing.T) core.Store { return coretest.OpenStore(t) },
		Reopen: func(t *testing.T, s core.Store) core.Store { return coretest.ReopenStore(t, s) },
		Clocked: func(t *testing.T, now func() time.Time) core.Store {
			return coretest.OpenStoreOn(t, now)
		},
	}
	storetest.Run(t, h)
	storetest.RunDomain(t, h)
}
