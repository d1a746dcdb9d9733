package storetest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// BenchClosed is how many closed questions the search benchmark keeps:
// ASKBRIDGE_BENCH_CLOSED, or 20,000.
func BenchClosed() int {
	return benchCount("ASKBRIDGE_BENCH_CLOSED", 20_000)
}

// rareEvery: one closed question in this many is a terraform apply, the
// needle the rare search looks for.
const rareEvery = 1000

// BenchSearchClosed measures one page of a search of the history on a
// store holding BenchClosed() closed questions (asked and answered
// through the service): the newest 50 with no filter; a rare text that
// one question in 1,000 holds, whose page reads core.SearchScan questions
// to find about two; and, as the yardstick in the same run, the store's
// plain read of as many closed questions by time (Between), which
// filters nothing. Run it with -benchtime 1x or more.
func BenchSearchClosed(b *testing.B, st core.Store) {
	ctx := context.Background()
	svc := coretest.Service(b, st, coretest.Options{})
	n := BenchClosed()
	Parallel(b, 8, n, func(i int64) error {
		text := fmt.Sprintf("Which region should cluster %d run in?", i)
		if i%rareEvery == 0 {
			text = fmt.Sprintf("Run terraform apply for stack %d?", i)
		}
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent", RunID: "run-1",
			ToolCallID: "call-" + strconv.FormatInt(i, 10), Text: text, Reversibility: core.Reversible})
		if err == nil {
			_, err = svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Text: "eu-west-1",
				Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}})
		}
		return err
	})
	b.Run("newest-50", func(b *testing.B) {
		for b.Loop() {
			p, err := st.SearchClosed(ctx, core.ClosedQuery{}, "", 50, core.SearchScan)
			if err != nil || len(p.Questions) != 50 {
				b.Fatalf("%d questions, %v", len(p.Questions), err)
			}
		}
	})
	b.Run("rare-text-page", func(b *testing.B) {
		found := 0
		for b.Loop() {
			p, err := st.SearchClosed(ctx, core.ClosedQuery{Text: "terraform apply"}, "", 50, core.SearchScan)
			if err != nil || (n > core.SearchScan && p.Next == "") {
				b.Fatalf("%+v, %v", p, err)
			}
			found = len(p.Questions)
		}
		b.ReportMetric(float64(found), "found/page")
	})
	b.Run("yardstick-between", func(b *testing.B) {
		far := time.Now().Add(365 * 24 * time.Hour)
		for b.Loop() {
			qs, err := st.Between(ctx, core.ByClosed, time.Unix(0, 0), far, core.SearchScan)
			if err != nil || len(qs) != min(n, core.SearchScan) {
				b.Fatalf("%d questions, %v", len(qs), err)
			}
		}
	})
}
