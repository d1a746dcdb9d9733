// Package storetest is the one conformance suite every core.Store must
// pass. A store's own test calls Run with a Harness; the suite is black-box
// and speaks only core's interface, so the embedded store and the Redis
// store are held to exactly the same behaviour.
package storetest

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

// Harness opens stores for the suite.
type Harness struct {
	// Open returns a fresh, empty store. The suite closes it.
	Open func(t *testing.T) core.Store
	// Reopen closes s and opens the same data again, as a restart would.
	Reopen func(t *testing.T, s core.Store) core.Store
}

// Run runs every behaviour of the suite as a subtest.
func Run(t *testing.T, h Harness) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

var cases []struct {
	name string
	run  func(t *testing.T, h Harness)
}
