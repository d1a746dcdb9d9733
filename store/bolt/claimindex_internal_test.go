package bolt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// openWith opens the store at path, closed when the test ends.
func openWith(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// asEarlierFile makes s's file what a store of schema version 1 would
// have left with the same records (the records' shape is unchanged; that
// version kept no claim index) and opens it again with opts.
func asEarlierFile(t *testing.T, s *Store, opts Options) *Store {
	t.Helper()
	err := s.db.Update(func(tx *bbolt.Tx) error {
		var index [][]byte
		err := tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
			if bytes.HasPrefix(name, []byte("ready/")) || bytes.HasPrefix(name, []byte("waiting/")) {
				index = append(index, bytes.Clone(name))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, name := range index {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(metaSchema, []byte("1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return openWith(t, s.Path(), opts)
}

// scanClaimable is what a claim took before the claim index, read from
// every record of the outbox: the leases idle for minIdle, oldest claim
// first, then the records not leased and due (no due time, or one not
// after now) in enqueue order, up to max; and, with none of those, when
// the earliest record not leased falls due (zero: none).
func scanClaimable(ob, lb *bbolt.Bucket, now time.Time, max int, minIdle time.Duration) (take []uint64, next time.Time, err error) {
	if lb != nil {
		c := lb.Cursor()
		for k, _ := c.First(); k != nil && len(take) < max; k, _ = c.Next() {
			seq := seqOfSuffix(k)
			rec, err := record(ob, seq)
			if err != nil {
				return nil, next, err
			}
			if rec == nil || rec.Lease == nil || !bytes.Equal(leaseKey(rec.Lease.At, seq), k) {
				continue
			}
			if now.Sub(rec.Lease.At) < minIdle {
				break
			}
			take = append(take, seq)
		}
	}
	c := ob.Cursor()
	for k, v := c.First(); k != nil && len(take) < max; k, v = c.Next() {
		rec, err := decodeOutbox(v)
		if err != nil {
			return nil, next, err
		}
		if rec.Lease != nil {
			continue
		}
		if rec.Due.After(now) {
			if next.IsZero() || rec.Due.Before(next) {
				next = rec.Due
			}
			continue
		}
		take = append(take, seqOfSuffix(k))
	}
	if len(take) > 0 {
		next = time.Time{}
	}
	return take, next, nil
}

// checkClaimIndex fails t unless surface's claim index is exact at now:
// every record not leased has one entry, in waiting under its due time
// or in ready (with no due time or one passed), every leased one its
// lease entry, and no entry is left over.
func checkClaimIndex(t *testing.T, s *Store, surface core.Surface, now time.Time) {
	t.Helper()
	err := s.db.View(func(tx *bbolt.Tx) error {
		ready, waiting, leases := keysOf(tx, readyBucket(surface)), keysOf(tx, waitingBucket(surface)), keysOf(tx, leaseBucket(surface))
		ob := tx.Bucket(outboxBucket(surface))
		if ob == nil {
			if len(ready)+len(waiting)+len(leases) > 0 {
				t.Errorf("%s: index entries without an outbox: %d ready, %d waiting, %d leases", surface, len(ready), len(waiting), len(leases))
			}
			return nil
		}
		err := ob.ForEach(func(k, v []byte) error {
			seq := seqOfSuffix(k)
			rec, err := decodeOutbox(v)
			if err != nil {
				return err
			}
			r, w := ready[string(u64(seq))], false
			delete(ready, string(u64(seq)))
			if !rec.Due.IsZero() {
				w = waiting[string(dueKey(rec.Due, seq))]
				delete(waiting, string(dueKey(rec.Due, seq)))
			}
			if rec.Lease != nil {
				if !leases[string(leaseKey(rec.Lease.At, seq))] {
					t.Errorf("%s: leased delivery %d has no lease entry", surface, seq)
				}
				delete(leases, string(leaseKey(rec.Lease.At, seq)))
				if r || w {
					t.Errorf("%s: leased delivery %d is indexed as ready (%v) or waiting (%v)", surface, seq, r, w)
				}
				return nil
			}
			switch {
			case r && w:
				t.Errorf("%s: delivery %d is both ready and waiting", surface, seq)
			case r && rec.Due.After(now):
				t.Errorf("%s: delivery %d is ready before it is due at %v", surface, seq, rec.Due)
			case !r && !w:
				t.Errorf("%s: delivery %d (due %v) has no entry", surface, seq, rec.Due)
			}
			return nil
		})
		if len(ready)+len(waiting)+len(leases) > 0 {
			t.Errorf("%s: entries naming no such delivery: %d ready, %d waiting, %d leases", surface, len(ready), len(waiting), len(leases))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// keysOf is the set of bucket name's keys.
func keysOf(tx *bbolt.Tx, name []byte) map[string]bool {
	out := map[string]bool{}
	if b := tx.Bucket(name); b != nil {
		_ = b.ForEach(func(k, _ []byte) error {
			out[string(k)] = true
			return nil
		})
	}
	return out
}

// TestClaimIndexMatchesFullScan drives a store with a fixed-seed random
// run of every write to an outbox (enqueues, delayed ones replacing each
// other, claims, retries, acks, extends, cancels, the clock moving, the
// file reopened and reopened as one of schema version 1), and checks
// after each step that the claim index is exact, and at each claim that
// it takes what a scan of every record would, in the same order, and
// waits for the same due time when there is nothing to take.
func TestClaimIndexMatchesFullScan(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	opts := Options{Now: clock.Now, NoSync: true}
	s := openWith(t, filepath.Join(t.TempDir(), "askbridge.db"), opts)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(31, 9))
	surfaces := []core.Surface{core.SurfaceSlack, core.SurfaceDiscord}
	consumers := []string{"c1", "c2"}
	var claimed []core.Delivery // handed out, perhaps acked or taken over since
	upgrades, claims, took := 0, 0, 0
	for step := range 1500 {
		surface := surfaces[rng.IntN(len(surfaces))]
		consumer := consumers[rng.IntN(len(consumers))]
		switch op := rng.IntN(100); {
		case op < 20:
			out := make([]core.Delivery, 1+rng.IntN(2))
			for i := range out {
				out[i] = core.Delivery{Key: fmt.Sprintf("d%d/%d", step, i), Kind: core.DeliverPost, Surface: surface, Room: "r"}
				if rng.IntN(3) == 0 { // delayed, under a key that may wait already
					out[i].Key = fmt.Sprintf("held/%d", rng.IntN(6))
					out[i].Delay = time.Duration(rng.IntN(600)) * time.Second
				}
			}
			if err := s.Enqueue(ctx, out); err != nil {
				t.Fatal(err)
			}
		case op < 45:
			claims++
			max, minIdle := 1+rng.IntN(5), []time.Duration{0, time.Minute, time.Hour}[rng.IntN(3)]
			var want []uint64
			var wantNext time.Time
			err := s.db.View(func(tx *bbolt.Tx) error {
				if ob := tx.Bucket(outboxBucket(surface)); ob != nil {
					var err error
					want, wantNext, err = scanClaimable(ob, tx.Bucket(leaseBucket(surface)), clock.Now(), max, minIdle)
					return err
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got, next, err := s.claimOnce(ctx, surface, consumer, max, minIdle)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []uint64
			for _, d := range got {
				seq, _, err := parseDeliveryID(d.ID)
				if err != nil {
					t.Fatal(err)
				}
				seqs = append(seqs, seq)
			}
			if !slices.Equal(seqs, want) {
				t.Fatalf("step %d: claim of %d on %s (idle %v) took %v; a full scan takes %v", step, max, surface, minIdle, seqs, want)
			}
			if len(got) == 0 && !next.Equal(wantNext) {
				t.Fatalf("step %d: an empty claim waits for %v; a full scan says %v", step, next, wantNext)
			}
			took += len(got)
			// A delivery's earlier handle mostly goes: its ack would be
			// a no-op. Some stay, to be tried.
			claimed = slices.DeleteFunc(claimed, func(d core.Delivery) bool {
				prior, _, _ := parseDeliveryID(d.ID)
				return slices.Contains(seqs, prior) && d.Surface == surface && rng.IntN(4) > 0
			})
			claimed = append(claimed, got...)
		case op < 57 && len(claimed) > 0:
			d := claimed[rng.IntN(len(claimed))]
			after := []time.Duration{0, time.Duration(rng.IntN(600)) * time.Second}[rng.IntN(2)]
			_, owner, _ := parseDeliveryID(d.ID)
			if rng.IntN(5) == 0 {
				owner = consumer // perhaps not its own: left alone
			}
			if err := s.Retry(ctx, d, owner, after); err != nil {
				t.Fatal(err)
			}
		case op < 70 && len(claimed) > 0:
			i := rng.IntN(len(claimed))
			if err := s.Ack(ctx, claimed[i].Surface, claimed[i].ID); err != nil {
				t.Fatal(err)
			}
			claimed = slices.Delete(claimed, i, i+1)
		case op < 74 && len(claimed) > 0:
			var ids []string
			for _, d := range claimed {
				if d.Surface == surface && rng.IntN(2) == 0 {
					ids = append(ids, d.ID)
				}
			}
			if _, err := s.Extend(ctx, surface, consumer, ids); err != nil {
				t.Fatal(err)
			}
		case op < 80:
			if _, err := s.Cancel(ctx, core.Pending{Surface: surface, Key: fmt.Sprintf("held/%d", rng.IntN(6))}); err != nil {
				t.Fatal(err)
			}
		case op < 97:
			clock.Advance(time.Duration(rng.IntN(300)) * time.Second)
		case op < 99:
			upgrades++
			s = asEarlierFile(t, s, opts)
		default:
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openWith(t, s.Path(), opts)
		}
		for _, surface := range surfaces {
			checkClaimIndex(t, s, surface, clock.Now())
		}
		if t.Failed() {
			t.Fatalf("after step %d", step)
		}
	}
	if upgrades == 0 || claims == 0 || took == 0 {
		t.Fatalf("the run did too little to test: %d upgrades, %d claims taking %d", upgrades, claims, took)
	}
}

// TestEarlierFileClaimsAsBefore: a file of schema version 1, which has
// no claim index, gets one when it is opened, once (the file is marked
// version 2), and hands out its deliveries as that version did: what
// was never claimed at once, what waits out a retry or a delay once due,
// what is leased once its lease is idle.
func TestEarlierFileClaimsAsBefore(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	opts := Options{Now: clock.Now}
	s := openWith(t, filepath.Join(t.TempDir(), "askbridge.db"), opts)
	ctx := t.Context()
	d := func(key string, delay time.Duration) core.Delivery {
		return core.Delivery{Key: key, Kind: core.DeliverPost, Surface: core.SurfaceSlack, Room: "C1", Delay: delay}
	}
	if err := s.Enqueue(ctx, []core.Delivery{d("a", 0), d("b", 0), d("c", 0), d("later", 10*time.Minute)}); err != nil {
		t.Fatal(err)
	}
	ab, err := s.Claim(ctx, core.SurfaceSlack, "c1", 2, time.Hour, 0)
	if err != nil || len(ab) != 2 {
		t.Fatalf("claim: %+v, %v", ab, err)
	}
	if err := s.Retry(ctx, ab[1], "c1", 5*time.Minute); err != nil {
		t.Fatal(err)
	}

	s = asEarlierFile(t, s, opts)
	err = s.db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(metaSchema); string(v) != "2" {
			t.Errorf("schema after the upgrade: %q; want 2, so that it runs once", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkClaimIndex(t, s, core.SurfaceSlack, clock.Now())
	claim := func(want ...string) {
		t.Helper()
		got, err := s.Claim(ctx, core.SurfaceSlack, "c2", 10, time.Hour, 0)
		var keys []string
		for _, d := range got {
			keys = append(keys, d.Key)
		}
		if err != nil || !slices.Equal(keys, want) {
			t.Fatalf("at %v claimed %q, %v; want %q", clock.Now().Format(time.Kitchen), keys, err, want)
		}
	}
	claim("c")
	clock.Advance(5 * time.Minute)
	claim("b")
	clock.Advance(5 * time.Minute)
	claim("later")
	clock.Advance(time.Hour) // every lease idle: oldest claim first
	claim("a", "c", "b", "later")
	checkClaimIndex(t, s, core.SurfaceSlack, clock.Now())
}
