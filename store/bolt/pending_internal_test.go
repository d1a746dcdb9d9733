package bolt

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// TestHeldRecordsOfEarlierVersions: records a store wrote before delays
// were generic (a held card update, marked with a heldMark and indexed
// under held/<surface>) read as delayed deliveries: one is cancelled by
// its key before it falls due, and another is handed out once due, its
// index entry cleared, so a late cancel of it is a no-op.
func TestHeldRecordsOfEarlierVersions(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	s, err := Open(filepath.Join(t.TempDir(), "askbridge.db"), Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	card := core.MessageRef{Surface: core.SurfaceDiscord, Room: "1234", ID: "9876", Kind: core.DeliverPost}
	due := clock.Now().Add(core.ShownHold)
	for _, key := range []string{"q/update/held/a", "q/update/held/b"} {
		d := core.Delivery{Key: key, Kind: core.DeliverUpdate, Surface: core.SurfaceDiscord, Room: card.Room, QuestionID: "q",
			Message: &card, CreatedAt: clock.Now()}
		// As the earlier version wrote it, field for field.
		err := s.db.Update(func(tx *bbolt.Tx) error {
			ob, err := tx.CreateBucketIfNotExists(outboxBucket(d.Surface))
			if err != nil {
				return err
			}
			seq, err := ob.NextSequence()
			if err != nil {
				return err
			}
			b, err := json.Marshal(map[string]any{"v": 1, "delivery": d, "due": due, "held": map[string]any{"ver": 3}})
			if err != nil {
				return err
			}
			if err := ob.Put(u64(seq), b); err != nil {
				return err
			}
			hb, err := tx.CreateBucketIfNotExists(heldBucket(d.Surface))
			if err != nil {
				return err
			}
			return hb.Put([]byte(key), u64(seq))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// ...in a file of that version, which had no claim index.
	s = asEarlierFile(t, s, Options{Now: clock.Now})
	ctx := t.Context()
	if ok, err := s.Cancel(ctx, core.Pending{Surface: core.SurfaceDiscord, Key: "q/update/held/a"}); err != nil || !ok {
		t.Fatalf("cancel of an earlier version's held update: %v, %v", ok, err)
	}
	if ds, err := s.Claim(ctx, core.SurfaceDiscord, "c", 10, time.Hour, 0); err != nil || len(ds) != 0 {
		t.Fatalf("claim before due: %+v, %v", ds, err)
	}
	clock.Advance(core.ShownHold)
	ds, err := s.Claim(ctx, core.SurfaceDiscord, "c", 10, time.Hour, 0)
	if err != nil || len(ds) != 1 || ds[0].Key != "q/update/held/b" || ds[0].Message == nil || *ds[0].Message != card {
		t.Fatalf("claim once due: %+v, %v", ds, err)
	}
	if ok, err := s.Cancel(ctx, core.Pending{Surface: core.SurfaceDiscord, Key: "q/update/held/b"}); err != nil || ok {
		t.Fatalf("cancel once claimed: %v, %v; want a no-op", ok, err)
	}
	err = s.db.View(func(tx *bbolt.Tx) error {
		if k, _ := tx.Bucket(heldBucket(core.SurfaceDiscord)).Cursor().First(); k != nil {
			t.Errorf("the index still names %q", k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
