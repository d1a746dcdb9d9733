// Package audit makes askbridge's event log tamper-evident: every event
// is chained to the one before it, in the same atomic write that appends
// it, on both stores, and [Verify] walks a log (through a store, or an
// NDJSON export) and names the first broken link.
//
// # The construction
//
// Each store keeps one or more streams of events (the embedded store one;
// the Redis store one per shard, since a script may touch one cluster
// slot only). In a stream, event i at position n_i carries
// (core.Chain):
//
//	Digest_i = HMAC-SHA256(K, "askbridge-audit-v1" | stream | Witness_i | canonical_i)
//	Hash_i   = SHA-1(Prev_i "\n" n_i "\n" Digest_i "\n" Purged_i), hex
//	Prev_i   = Hash_(i-1) ("" for the first event of the stream)
//
// K is the audit key, | length-prefixed concatenation (Key.Digest),
// canonical_i the event's fields but Seq and Chain, and Witness_i
// "<n>:<hash>", the newest head
// of the stream the writer knew when it built the event ("" if none).
//
// Why the link is split in two. The issue asks for HMAC-SHA256 under the
// audit key over the previous hash and the event, computed in the atomic
// write that appends it. On the embedded store that write runs in Go and
// knows the previous event, so the witness is exactly the previous
// event's position and hash, and Digest_i is that HMAC (with Hash_i an
// unkeyed link besides). On Redis the write is a Lua script, and Lua has
// no HMAC and must not have the key: anything a script can compute,
// someone who can run commands on the Redis server can compute too, and
// that is who a tamper-evident log is kept against (a key passed to a
// script also shows in SLOWLOG and MONITOR). Go cannot know the previous
// event without a read before the write, and making the write
// conditional on that read (compare-and-set on the head) would make every
// append in a shard contend with every other, across replicas. So:
//
//   - Go computes the keyed Digest over the event and a witness: the
//     newest head of that stream it has seen (every script reply that
//     appended an event returns the new head). Nobody without K can alter
//     an event, forge one, or change what it witnesses.
//   - The script computes the link Hash with redis.sha1hex, over the
//     previous event's Hash (the stream's newest entry's, which the
//     script keeps beside the shard's event counter and reads there),
//     the position and the digest, so the order of the
//     stream is fixed in the same atomic step as the append.
//
// The link alone is unkeyed: someone with write access who deletes or
// moves an event could recompute every later link. But every later event
// whose witness is at or after the change still holds, under K, the hash
// the chain had there, which no longer matches: [Verify] reports it. So
// an edit, a deletion or a reordering is found unless it lies after the
// newest witness (the newest events of a stream, the same blind spot any
// log has for its tail; an export taken regularly pins it, and the
// embedded store keeps a keyed record of its end, ends.go), and a naive
// edit that does not recompute the links breaks the link check at the
// next event at once. SHA-1 is what Redis can compute; what it protects
// here is the order, which the keyed witnesses check again.
//
// The digest does not cover the event's position (on Redis the script
// picks it, and the script must not hold K), so a copy of an earlier
// event appended with its link recomputed carries a valid digest: the
// original's. No two events of a stream share a digest, since each
// witnesses the chain as it was, so [Verify] refuses a digest met twice
// in a stream; a copy of an event purged since, and in no export
// walked, is not found so.
//
// A store made by a version that chains has chained every event since
// its creation, so an event without a chain is a break, unless the
// operator says the log began before the chain (Options.AllowUnchained):
// nothing kept in the store could say so that someone who strips the
// chains could not forge too.
//
// # Changing the key
//
// A digest does not say which key made it: after the key is changed,
// the log holds events under each key it has had, and [Verify] is given
// the earlier ones (Options.OldKeys, oldest first). It tries the key of
// the stream's previous event first, then later ones, never an earlier
// one: once a stream has an event under the new key, an event under the
// old one after it is a break. So whoever holds a key that was changed
// because it leaked can forge no event after the first under the new
// key, and alter none before the newest witness under it.
//
// # Purges
//
// Retention drops closed questions with their events, which leaves gaps
// inside a stream. The purge appends, in the same atomic step and before
// it deletes anything, a checkpoint event (core.EventCheckpoint) whose
// Purged lists the dropped chained events as runs "from:to:prev:last":
// positions, the Prev of the first and the Hash of the last of events
// that followed one another in the chain (runs carried by a checkpoint
// that is itself purged are folded in). The verifier follows a run as if
// it were one event: its prev must be the hash before it, and the next
// event must link to its last. A walk that holds a run's first events
// (an export taken before the purge, the first event there linked to
// the run's prev) follows the rest of the run from inside it. The
// checkpoint's payload holds the same runs (Checkpoint), so that its
// keyed digest covers them: runs only in the unkeyed link could be forged
// to bridge deleted events. Checkpoints
// written before that have their runs in the link alone, and the verifier
// takes such a checkpoint only before the first whose runs are keyed.
package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // the link is what Redis scripts can compute; see the package doc
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Key is the audit key. It logs and prints as REDACTED.
type Key []byte

func (Key) String() string   { return "REDACTED" }
func (Key) GoString() string { return "REDACTED" }

// MarshalText keeps the key out of JSON and YAML renderings.
func (Key) MarshalText() ([]byte, error) { return []byte("REDACTED"), nil }

// domain separates the audit digest from every other HMAC askbridge makes.
const domain = "askbridge-audit-v1"

// Witness is a head of a stream: the position and hash of an event in it.
type Witness struct {
	N    int64
	Hash string
}

// String is the witness as a chain stores it: "<n>:<hash>", or "" for
// none.
func (w Witness) String() string {
	if w.Hash == "" {
		return ""
	}
	return strconv.FormatInt(w.N, 10) + ":" + w.Hash
}

// ParseWitness reads Witness.String's form; "" is none.
func ParseWitness(s string) (Witness, bool) {
	if s == "" {
		return Witness{}, true
	}
	n, h, ok := strings.Cut(s, ":")
	v, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || v <= 0 || !isHex(h) {
		return Witness{}, false
	}
	return Witness{N: v, Hash: h}, true
}

// Digest is the keyed digest of e in stream, witnessing w: the HMAC of
// the domain, the stream, the witness and the event's fields but Seq and
// Chain (its canonical bytes), each prefixed with its length so that no
// two events share an input. The time is in UTC, and the payload
// compacted and HTML-escaped as the stores keep it, so that an event read
// back from either store gives the digest it was appended with.
func (k Key) Digest(e core.Event, stream int, w Witness) (string, error) {
	m := macs.get(k)
	defer macs.put(m)
	m.buf = m.buf[:0]
	if len(e.Payload) > 0 {
		var compact bytes.Buffer // the stores' form: compact, HTML-escaped
		if err := json.Compact(&compact, e.Payload); err != nil {
			return "", fmt.Errorf("audit: event payload: %w", err)
		}
		var escaped bytes.Buffer
		json.HTMLEscape(&escaped, compact.Bytes())
		m.payload = append(m.payload[:0], escaped.Bytes()...)
	} else {
		m.payload = m.payload[:0]
	}
	m.field(domain)
	m.field(strconv.Itoa(stream))
	if w.Hash != "" {
		m.field(strconv.FormatInt(w.N, 10) + ":" + w.Hash)
	} else {
		m.field("")
	}
	m.field(string(e.QuestionID))
	m.field(string(e.RunID))
	var at [64]byte
	m.fieldBytes(e.At.UTC().AppendFormat(at[:0], time.RFC3339Nano))
	m.field(string(e.Kind))
	m.field(e.Actor)
	m.field(string(e.Surface))
	m.field(e.Reason)
	m.fieldBytes(m.payload)
	m.h.Reset()
	m.h.Write(m.buf)
	return hex.EncodeToString(m.h.Sum(m.sum[:0])), nil
}

// mac is one HMAC under one key, with its scratch space.
type mac struct {
	key     Key
	h       hash.Hash
	buf     []byte
	payload []byte
	sum     [sha256.Size]byte
}

// field and fieldBytes append a length-prefixed field.
func (m *mac) field(v string) {
	m.buf = strconv.AppendInt(m.buf, int64(len(v)), 10)
	m.buf = append(m.buf, ':')
	m.buf = append(m.buf, v...)
}

func (m *mac) fieldBytes(v []byte) {
	m.buf = strconv.AppendInt(m.buf, int64(len(v)), 10)
	m.buf = append(m.buf, ':')
	m.buf = append(m.buf, v...)
}

// macPool keeps HMAC states for reuse: a process chains under one key,
// and a digest per event is on every store's write path.
type macPool struct{ p sync.Pool }

var macs macPool

func (p *macPool) get(k Key) *mac {
	if m, _ := p.p.Get().(*mac); m != nil && bytes.Equal(m.key, k) {
		return m
	}
	return &mac{key: bytes.Clone(k), h: hmac.New(sha256.New, k)}
}

func (p *macPool) put(m *mac) { p.p.Put(m) }

// Link is an event's Hash: the link over the previous event's hash, the
// event's position, its digest and, on a checkpoint, its runs. The Redis
// scripts compute the same (store/redis/lua/common.lua, append_event).
func Link(prev string, n int64, digest, purged string) string {
	sum := sha1.Sum([]byte(prev + "\n" + strconv.FormatInt(n, 10) + "\n" + digest + "\n" + purged)) //nolint:gosec // see the package doc
	return hex.EncodeToString(sum[:])
}

// Chain is the chain of an event appended at position n of stream after
// the event hashed prev: the witness is that event, as on a store whose
// write knows it (the embedded store).
func (k Key) Chain(e core.Event, stream int, n int64, prev Witness, purged string) (*core.Chain, error) {
	d, err := k.Digest(e, stream, prev)
	if err != nil {
		return nil, err
	}
	return &core.Chain{Stream: stream, N: n, Prev: prev.Hash, Witness: prev.String(), Digest: d,
		Hash: Link(prev.Hash, n, d, purged), Purged: purged}, nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
