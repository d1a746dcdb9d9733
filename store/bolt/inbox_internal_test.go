package bolt

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// An inbox filter reads what it matches from the open index's values,
// and, for entries written before those values were (empty), from the
// questions themselves: both give the same pages.
func TestOpenPageFiltersEntriesOldAndNew(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "askbridge.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	for i := range 12 {
		at := t0.Add(time.Duration(i) * time.Second)
		q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "agent-a", RunID: "run-1",
			Text: "Which database?", Route: "default", CreatedAt: at, Deadline: at.Add(time.Hour),
			Timeout: core.Duration(time.Hour), OnTimeout: core.OnTimeoutDeny, State: core.StateOpen}
		switch i % 4 {
		case 1:
			q.Route = "ops"
		case 2:
			q.Agent = "agent-b"
		case 3:
			q.Labels.Project, q.Reversibility = "billing", core.Reversible
		}
		if err := s.Create(ctx, q, core.Event{QuestionID: q.ID, RunID: q.RunID, At: at, Kind: core.EventAsked}, nil); err != nil {
			t.Fatal(err)
		}
	}
	filters := []core.OpenFilter{{Route: "ops"}, {Agent: "agent-b"}, {Project: "billing"}, {Reversibility: core.Reversible},
		{Reversibility: core.Unclassified}, {Kind: string(core.KindClarification), Route: "default"}, {Kind: string(core.KindDecision)}}
	pages := func() [][]core.QuestionID {
		var out [][]core.QuestionID
		for _, f := range filters {
			var ids []core.QuestionID
			cursor := ""
			for {
				p, err := s.OpenPage(ctx, f, cursor, 2)
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range p.Questions {
					if !f.Match(q) {
						t.Fatalf("%+v listed %s, which it does not match", f, q.ID)
					}
					ids = append(ids, q.ID)
				}
				if len(ids) > 0 && p.Total != len(ids) && p.Next == "" {
					t.Fatalf("%+v: total %d for %d listed", f, p.Total, len(ids))
				}
				if p.Next == "" {
					break
				}
				cursor = p.Next
			}
			out = append(out, ids)
		}
		return out
	}
	withValues := pages()
	for i, ids := range withValues[:5] {
		if len(ids) != 3 && i < 3 || len(ids) == 0 {
			t.Fatalf("filter %+v listed %d", filters[i], len(ids))
		}
	}
	// Empty every entry's value, as a file written before they had one.
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketOpen)
		var keys [][]byte
		_ = b.ForEach(func(k, v []byte) error {
			if len(v) == 0 {
				t.Error("an entry written without its value")
			}
			keys = append(keys, slices.Clone(k))
			return nil
		})
		for _, k := range keys {
			if err := b.Put(k, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if old := pages(); !slices.EqualFunc(old, withValues, slices.Equal) {
		t.Fatalf("pages from emptied entries %v, from values %v", old, withValues)
	}
}
