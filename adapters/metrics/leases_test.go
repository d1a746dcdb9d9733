package metrics_test

import (
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/adapters/metrics"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// callsBack is the real embedded store, counting the watches core takes
// through its call-back (WatchFunc).
type callsBack struct {
	core.Store
	funcs atomic.Int32
}

func (s *callsBack) WatchFunc(id core.QuestionID, wake func()) func() {
	s.funcs.Add(1)
	return s.Store.WatchFunc(id, wake)
}

// TestLeaseWatchKeepsTheStoresCallBack: the program hands core the store
// wrapped by WatchLeases, and core's waits must still be called back by
// the store rather than each hold a goroutine relaying a channel (the
// wake-up burst's cost). Before WatchFunc was part of core.Store, the
// wrapper hid it, and every taken long poll in production held a relay.
func TestLeaseWatchKeepsTheStoresCallBack(t *testing.T) {
	st := &callsBack{Store: coretest.OpenStore(t)}
	m := metrics.New("dev", metrics.Source{})
	svc := coretest.Service(t, m.WatchLeases(st), coretest.Options{})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: "default",
		Text: "Which?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	w, err := svc.Watch(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if n := st.funcs.Load(); n != 1 {
		t.Fatalf("the wrapped store was watched through its call-back %d times; want 1", n)
	}
}
