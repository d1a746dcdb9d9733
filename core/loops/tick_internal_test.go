package loops

import (
	"context"
	"errors"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// tickReports is a ticker that answers each Tick with the next report.
type tickReports struct {
	reps []core.TickReport
	errs []error
}

func (t *tickReports) Tick(context.Context) (core.TickReport, error) {
	rep, err := t.reps[0], t.errs[0]
	t.reps, t.errs = t.reps[1:], t.errs[1:]
	return rep, err
}

// TestATickSaysWhenTheSweepAfterAReloadWasCut: a sweep of cards after a
// reload that stops at its bound leaves cards stale until their next
// edit; the operator is told, once, when it happens. Before, the report
// was dropped and nothing said so.
func TestATickSaysWhenTheSweepAfterAReloadWasCut(t *testing.T) {
	failed := errors.New("store down")
	svc := &tickReports{
		reps: []core.TickReport{{Refreshed: 3}, {Refreshed: 500, RefreshCut: true}, {}, {RefreshCut: true}},
		errs: []error{nil, nil, nil, failed},
	}
	var told []error
	for range 4 {
		tickOnce(context.Background(), svc, func(err error) { told = append(told, err) })
	}
	if len(told) != 2 || !errors.Is(told[0], errRefreshCut) || !errors.Is(told[1], failed) {
		t.Fatalf("told %v; want the cut once, then the store's error (which says itself what was left)", told)
	}
}
