package core_test

import (
	"context"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// lateStore writes a commit and then answers only once the caller's
// context has ended (a reply lost to the deadline), or, with slowRead,
// makes a read wait out the context and write nothing.
type lateStore struct {
	core.Store
	slowRead bool
}

func (s lateStore) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	if _, err := s.Store.Commit(context.WithoutCancel(ctx), c); err != nil {
		return nil, err
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (s lateStore) ReadToChange(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	if s.slowRead {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Store.ReadToChange(ctx, id)
}

// TestACommitCutByItsDeadlineIsOfUnknownOutcome: an answer whose write
// was sent and whose reply the caller's deadline cut may have landed (it
// did here), and its error says so (core.OutcomeUnknown), still as an
// internal error; an answer whose read ran out wrote nothing, and its
// error does not say it may have. Before, the two errors were alike, and
// a door could only guess from the deadline.
func TestACommitCutByItsDeadlineIsOfUnknownOutcome(t *testing.T) {
	for _, slowRead := range []bool{false, true} {
		st := coretest.OpenStore(t)
		svc := coretest.Service(t, lateStore{Store: st, slowRead: slowRead}, coretest.Options{})
		q, err := svc.Ask(t.Context(), validDecision())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err = svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "alice"}, OptionID: "x"})
		if core.ErrorCode(err) != core.CodeInternal {
			t.Fatalf("slow read %v: %v, want an internal error", slowRead, err)
		}
		got, gerr := st.Get(t.Context(), q.ID)
		if gerr != nil {
			t.Fatal(gerr)
		}
		if written := !got.Open(); core.OutcomeUnknown(err) != written || written == slowRead {
			t.Fatalf("slow read %v: written %v, error %v marked unknown %v", slowRead, written, err, core.OutcomeUnknown(err))
		}
	}
}
