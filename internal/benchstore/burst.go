package benchstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// AskDecision asks, through svc, a two-option decision on route, as the
// click benchmarks answer it by its first option, and returns its id.
func AskDecision(b *testing.B, svc *core.Service, route string) string {
	b.Helper()
	q, err := svc.Ask(context.Background(), core.AskInput{Agent: "agent", RunID: "run-1", Route: route, Kind: core.KindDecision,
		Reversibility: core.Reversible, Text: "Which database?", Options: []core.Option{
			{ID: "pg", Title: "PostgreSQL", Writeup: "Known.", Recommended: true},
			{ID: "ddb", Title: "DynamoDB", Writeup: "Scales."}}})
	if err != nil {
		b.Fatal(err)
	}
	return q.ID
}

// Burst calls send(0) to send(n-1), one every span/n, each on a goroutine
// of its own, so the n calls spread evenly over span whatever each takes;
// it returns, once all have returned, how long each took.
func Burst(n int, span time.Duration, send func(i int)) []time.Duration {
	took := make([]time.Duration, n)
	var wg sync.WaitGroup
	pace := time.NewTicker(span / time.Duration(n))
	defer pace.Stop()
	for i := range n {
		if i > 0 {
			<-pace.C
		}
		wg.Go(func() {
			t := time.Now()
			send(i)
			took[i] = time.Since(t)
		})
	}
	wg.Wait()
	return took
}

// Millis is the p-th quantile (0 to 1) of sorted, in milliseconds.
func Millis(sorted []time.Duration, p float64) float64 {
	return float64(sorted[int(p*float64(len(sorted)-1))]) / 1e6
}
