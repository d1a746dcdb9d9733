package bolt

// Every bucket name and key encoding of the store lives in this file, so the
// on-disk layout can be read in one place.
//
// Layout (top-level buckets):
//
//	meta                  "schema" -> decimal schema version; "heartbeat" -> time (binary);
//	                      "chain" -> "<seq> <hash>", the audit chain's head (chain.go);
//	                      "chain-end" -> the audit key's record of that head (hex, chain.go)
//	questions             id -> questionRecord (JSON)
//	open                  rank(1) | created ms(8) | id -> openEntry (JSON; "" before it)  open questions, listing order, what a filter matches
//	created               created ms(8) | id -> ""               every stored question
//	closed                closed ms(8) | id -> ""                closed questions
//	deadline              deadline ms(8) | id -> ""              open questions with a deadline
//	runs                  run id -> runRecord (JSON)             ended runs
//	run-open              len(run)(2) | run | id -> ""           open questions of each run
//	events                seq(8) -> core.Event (JSON)            the append-only log
//	question-events       len(id)(2) | id | seq(8) -> ""         events of each stored question
//	loose-events          at ms(8) | seq(8) -> ""                events whose question is not stored
//	outbox/<surface>      seq(8) -> outboxRecord (JSON)          deliveries, with their lease
//	leases/<surface>      claimed-at ns(8) | seq(8) -> ""        leased deliveries, oldest claim first
//	held/<surface>        delivery key -> seq(8)                 delayed deliveries not yet claimed (pending.go)
//	ready/<surface>       seq(8) -> ""                           deliveries not leased and due, enqueue order (claimindex.go)
//	waiting/<surface>     due s(8) | ns(4) | seq(8) -> ""        deliveries not leased and not yet due, earliest first
//	values                key -> value                           adapters' shared state (core.Values)
//	values-ttl            key -> expiry ms(8) | value            shared state that expires (core.Values)
//	value-leases          key -> leaseRecord (JSON)              adapters' leases (core.Values)
//	once                  key -> expiry time (binary)            keys seen once (core.Values)
//	idempotency           idempotency key -> question id         asks that may be repeated
//	standing              id -> core.Standing (JSON)             standing approvals
//	endings               run id -> began ms(8)                  runs being ended (endings.go)
//
// Integers are big-endian. Times in keys are signed and stored with the
// sign bit flipped, so byte order is time order even before 1970.

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
)

var (
	bucketMeta           = []byte("meta")
	bucketQuestions      = []byte("questions")
	bucketOpen           = []byte("open")
	bucketCreated        = []byte("created")
	bucketClosed         = []byte("closed")
	bucketDeadline       = []byte("deadline")
	bucketRuns           = []byte("runs")
	bucketRunOpen        = []byte("run-open")
	bucketEvents         = []byte("events")
	bucketQuestionEvents = []byte("question-events")
	bucketLooseEvents    = []byte("loose-events")
	bucketValues         = []byte("values")
	bucketValuesTTL      = []byte("values-ttl")
	bucketLeasesKV       = []byte("value-leases")
	bucketOnce           = []byte("once")
	bucketIdempotency    = []byte("idempotency")
	bucketStanding       = []byte("standing")
	bucketEndings        = []byte("endings")

	// fixedBuckets are created when the file is opened; the per-surface
	// outbox buckets are created on first use.
	fixedBuckets = [][]byte{
		bucketMeta, bucketQuestions, bucketOpen, bucketCreated, bucketClosed,
		bucketDeadline, bucketRuns, bucketRunOpen, bucketEvents,
		bucketQuestionEvents, bucketLooseEvents, bucketIdempotency,
	}

	metaSchema    = []byte("schema")
	metaHeartbeat = []byte("heartbeat")
	metaChain     = []byte("chain")
	metaChainEnd  = []byte("chain-end")
)

// schemaVersion is written to meta and to every JSON record. A file or a
// record from a newer version is refused rather than misread. Version 2
// added the claim index (ready/ and waiting/, claimindex.go), which Open
// builds for a file of version 1; an askbridge that reads only version 1
// refuses a file of 2, since its writes would leave the index behind.
const schemaVersion = 2

func outboxBucket(s core.Surface) []byte { return []byte(outboxPrefix + string(s)) }
func leaseBucket(s core.Surface) []byte  { return []byte("leases/" + string(s)) }
func heldBucket(s core.Surface) []byte   { return []byte("held/" + string(s)) }

// outboxPrefix starts the name of every surface's outbox bucket.
const outboxPrefix = "outbox/"

func readyBucket(s core.Surface) []byte   { return []byte("ready/" + string(s)) }
func waitingBucket(s core.Surface) []byte { return []byte("waiting/" + string(s)) }

// u64 is the 8-byte big-endian form of a sequence number.
func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func sortable(v int64) uint64 { return uint64(v) ^ (1 << 63) }

// msKey is a time at millisecond precision, ordered by time.
func msKey(t time.Time) []byte { return u64(sortable(t.UnixMilli())) }

// timeIDKey orders by time, then by id.
func timeIDKey(t time.Time, id core.QuestionID) []byte {
	return append(msKey(t), id...)
}

// idOfTimeKey is the id part of a timeIDKey.
func idOfTimeKey(k []byte) core.QuestionID { return core.QuestionID(k[8:]) }

// openRank puts hard-to-reverse questions first; reversible and
// unclassified ones share the second rank.
func openRank(r core.Reversibility) byte {
	if r == core.HardToReverse {
		return 0
	}
	return 1
}

// openKey is the position of q in the open listing.
func openKey(q *core.Question) []byte {
	k := make([]byte, 0, 1+8+len(q.ID))
	k = append(k, openRank(q.Reversibility))
	k = append(k, msKey(q.CreatedAt)...)
	return append(k, q.ID...)
}

func idOfOpenKey(k []byte) core.QuestionID { return core.QuestionID(k[9:]) }

// prefixed is a length-prefixed string, so that one value can never be
// read as the prefix of another.
func prefixed(s string) ([]byte, error) {
	if len(s) > math.MaxUint16 {
		return nil, core.Errorf(core.CodeInvalid, "bolt key", "%d-byte key part is too long", len(s))
	}
	b := make([]byte, 2, 2+len(s))
	binary.BigEndian.PutUint16(b, uint16(len(s)))
	return append(b, s...), nil
}

// runOpenKey places id in run's open set; runOpenPrefix scans that set.
func runOpenKey(run string, id core.QuestionID) ([]byte, error) {
	p, err := runOpenPrefix(run)
	if err != nil {
		return nil, err
	}
	return append(p, id...), nil
}

func runOpenPrefix(run string) ([]byte, error) { return prefixed(run) }

// questionEventKey ties event seq to question id.
func questionEventKey(id core.QuestionID, seq uint64) ([]byte, error) {
	p, err := prefixed(string(id))
	if err != nil {
		return nil, err
	}
	return append(p, u64(seq)...), nil
}

func questionEventPrefix(id core.QuestionID) ([]byte, error) { return prefixed(string(id)) }

func seqOfSuffix(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-8:]) }

// looseEventKey orders an event without a stored question by its time.
func looseEventKey(at time.Time, seq uint64) []byte {
	return append(msKey(at), u64(seq)...)
}

// leaseKey orders leased deliveries by claim time (nanoseconds), then seq.
func leaseKey(at time.Time, seq uint64) []byte {
	return append(u64(sortable(at.UnixNano())), u64(seq)...)
}

// dueKey orders deliveries waiting to fall due by due time, then seq.
// The time is in seconds and nanoseconds, not nanoseconds since 1970
// alone, which overflow past 2262: a retry or delay of any length fits.
func dueKey(due time.Time, seq uint64) []byte {
	k := make([]byte, 20)
	binary.BigEndian.PutUint64(k, sortable(due.Unix()))
	binary.BigEndian.PutUint32(k[8:], uint32(due.Nanosecond()))
	binary.BigEndian.PutUint64(k[12:], seq)
	return k
}

// dueOfKey is the due time of a dueKey.
func dueOfKey(k []byte) time.Time {
	return time.Unix(int64(binary.BigEndian.Uint64(k)^(1<<63)), int64(binary.BigEndian.Uint32(k[8:12]))).UTC()
}

// timeOfLeaseKey is the claim time of a leaseKey.
func timeOfLeaseKey(k []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(k)^(1<<63))).UTC()
}

// deliveryID is the handle of a claim of an outbox entry: the entry, and
// the consumer that claimed it, so that Ack (which core's interface
// gives no consumer) removes the entry only while it is still that
// consumer's claim.
func deliveryID(seq uint64, consumer string) string {
	return strconv.FormatUint(seq, 10) + "/" + consumer
}

// parseDeliveryID splits a handle deliveryID made into its entry and
// consumer.
func parseDeliveryID(id string) (uint64, string, error) {
	head, consumer, ok := strings.Cut(id, "/")
	seq, err := strconv.ParseUint(head, 10, 64)
	if !ok || err != nil || consumer == "" || strconv.FormatUint(seq, 10) != head || seq == 0 {
		return 0, "", core.Errorf(core.CodeInvalid, "ack", "delivery id %q is not one of this store's", id)
	}
	return seq, consumer, nil
}
