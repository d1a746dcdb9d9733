package bolt

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// earlierRecord is a question record as written before the head came
// first: the question, then its version, and the state only inside it.
type earlierRecord struct {
	V   int            `json:"v"`
	Q   *core.Question `json:"q"`
	Ver int64          `json:"ver,omitempty"`
}

// headCases are questions whose records' heads are read back: open and
// closed, at version 0 (written without "ver") and later, with text that
// looks like the head's own names.
func headCases() []*core.Question {
	now := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	q := func(ver int64, st core.State) *core.Question {
		return &core.Question{ID: core.NewID(0), Kind: core.KindDecision, State: st, Version: ver, CreatedAt: now,
			Text:    `{"v":9,"ver":7,"state":"open","q":{}}`,
			Options: []core.Option{{ID: "state", Title: "ver", Writeup: `"state":"expired"`}}}
	}
	closed := q(3, core.StateAnswered)
	closed.Resolution = &core.Resolution{OptionID: "state", At: now, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "op"}}
	return []*core.Question{q(0, core.StateOpen), q(1, core.StateOpen), q(41, core.StateOpen), closed, q(2, core.StateExpired)}
}

// bothLayouts is q's record as encodeQuestion writes it, and as records
// were written before.
func bothLayouts(tb testing.TB, q *core.Question) (now, before []byte) {
	tb.Helper()
	now, err := encodeQuestion(q)
	if err != nil {
		tb.Fatal(err)
	}
	if before, err = json.Marshal(earlierRecord{V: schemaVersion, Q: q, Ver: q.Version}); err != nil {
		tb.Fatal(err)
	}
	return now, before
}

// TestHeadOfEitherLayout: decodeHead reads the layout, version and state
// of a record as encodeQuestion writes it and as records written before
// it have them, the same.
func TestHeadOfEitherLayout(t *testing.T) {
	for _, q := range headCases() {
		want := questionHead{V: schemaVersion, Ver: q.Version, State: q.State}
		now, before := bothLayouts(t, q)
		for name, b := range map[string][]byte{"now": now, "earlier": before} {
			if got, err := decodeHead(b); err != nil || got != want {
				t.Errorf("%s layout, %s at %d: head %+v, %v; want %+v", name, q.State, q.Version, got, err, want)
			}
		}
		// The record still reads back whole, as it was.
		got, err := decodeQuestion(now)
		if err != nil || got.Version != q.Version || got.State != q.State || got.Text != q.Text {
			t.Errorf("decodeQuestion: %+v, %v", got, err)
		}
	}
}

// TestHeadRefusesWhatIsNoRecord: a record that is not one, or is of a
// later layout, is refused with an error naming the question record,
// never read as a head.
func TestHeadRefusesWhatIsNoRecord(t *testing.T) {
	for _, b := range []string{
		``,
		`[]`,
		`"open"`,
		`{"v":"1","state":"open","q":{}}`,
		`{"v":1,"ver":"2","state":"open","q":{}}`,
		`{"v":1,"state":3,"q":{}}`,
		`{"v":1,"q":{"state":7}}`,
		`{"v":1,"q":[]}`,
		`{"v":1,"q":{"state":"open"`,
		`{"v":1,"q":{"state":"open"},"ver":3`,
		`{"v":3,"ver":1,"state":"open","q":{}}`,
		`{"v":1.5,"state":"open","q":{}}`,
	} {
		if h, err := decodeHead([]byte(b)); err == nil || !strings.Contains(err.Error(), "question") {
			t.Errorf("decodeHead(%q) = %+v, %v; want an error about the question record", b, h, err)
		}
	}
}

// BenchmarkDecodeHead reads the head of a closed decision's record as the
// compare-and-set does, in the layout encodeQuestion writes ("now") and
// in the earlier one, beside how it was read before (json.Unmarshal of
// the three fields, "unmarshal").
func BenchmarkDecodeHead(b *testing.B) {
	q := headCases()[3]
	q.Text = strings.Repeat("Which region should the new cluster run in? ", 20)
	now, before := bothLayouts(b, q)
	b.Run("now", func(b *testing.B) { benchHead(b, now, decodeHead) })
	b.Run("earlier", func(b *testing.B) { benchHead(b, before, decodeHead) })
	b.Run("unmarshal", func(b *testing.B) {
		benchHead(b, before, func(r []byte) (questionHead, error) {
			var h struct {
				V   int   `json:"v"`
				Ver int64 `json:"ver"`
				Q   struct {
					State core.State `json:"state"`
				} `json:"q"`
			}
			err := json.Unmarshal(r, &h)
			return questionHead{V: h.V, Ver: h.Ver, State: h.Q.State}, err
		})
	})
}

func benchHead(b *testing.B, record []byte, decode func([]byte) (questionHead, error)) {
	b.ReportAllocs()
	b.SetBytes(int64(len(record)))
	for b.Loop() {
		if h, err := decode(record); err != nil || h.State != core.StateAnswered {
			b.Fatal(h, err)
		}
	}
}
