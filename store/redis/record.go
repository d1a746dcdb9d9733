package redis

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
)

// A question is one hash and one or two strings. What never changes once
// written is read only whole and kept in string keys of its own: the
// question's JSON document, written by Go at create (keys.document), and
// once it is closed its resolution (JSON, keys.resolution), written by
// the close without reading anything. What changes is kept in fields of
// the hash that the scripts compare and set without parsing JSON:
//
//	state        open | answered | declined | timed_out | expired | cancelled
//	deadline     deadline in ms (absent: none)
//	renot        how many renotices were counted
//	run          run id (for the run-open index)
//	om           the question's member of the open index less the ":<id>"
//	             ending it (18 bytes: class and created time), which purge
//	             removes
//	closed       closed ms, once closed
//	na           form items answered (earlier versions also kept ni,
//	             the items asked, which nothing read)
//	a:<item>     a form item's answer (JSON)
//	v:<voter>    a vote (JSON), one per voter (core.Vote.Key)
//	nv           votes in all (earlier versions also kept vc:<choice>,
//	             the votes for one choice)
//	nm           cards recorded
//	m:<n>, mk:<n>, ms:<n>  card n (card.go)
//	ver          the question's version (core.Question.Version): every
//	             script that changes the question moves it on by one, and
//	             resolve.lua writes a change only while it is the one the
//	             change was computed from; part of update delivery keys
//	ev           stream ids of the question's events, space-separated (purge
//	             drops them with the question)
//	at           the attempts (Store.attempt) that changed the question so
//	             far, space-separated, one per Commit, the closing one
//	             ending in "!"; how resolve.lua knows a run sent again
//	rat          earlier versions only: the last three renotices'
//	             attempts, for renotify.lua likewise (a renotice now
//	             leaves a mark of its own, keys.renotified); left as it is
//
// Counters that are zero (renot, na, nm, ver) are not stored: a
// missing one reads as 0. While a question is open every field is short,
// so Redis keeps the hash in its compact listpack encoding (values of at
// most 64 bytes, hash-max-listpack-value), a few hundred bytes rather
// than a hashtable's 1,500; that is why the document and the resolution,
// some hundreds of bytes each, are not in it. The document leaves out
// what the hash or the key says (id, state, deadline; storedDoc). Form
// answers and votes are JSON of their own fields, so a form or a vote
// makes the hash a hashtable.
//
// This is layout 2 (migrate.go). Records of earlier layouts are
// rewritten into it once, when a store opens: layout 0 and 1 kept the
// document in the hash's "doc" field (with id, state and deadline in it,
// which storedDoc still reads and drops) and the resolution in its "res"
// field, or (layout 1, later) the resolution after the document in its
// key, behind the record separator 0x1e; om was the whole member; the
// oldest kept their event ids in a list key of their own (keys.go) and
// every counter and a "created" field nothing reads (left as they are).
// Their cards may be fragments (card.go), which are read as they are.
// Readers hand decodeQuestion the hash with the document under "doc" and
// the resolution under "res" (withParts, common.lua's record).

// storedDoc is the question document as stored: the question less what
// the hash holds in fields of its own or the key says, which shadow the
// question's (encoding/json prefers the shallower field), so they are
// left out when empty and an earlier document's are read into them and
// dropped.
type storedDoc struct {
	core.Question
	ID       string     `json:"id,omitempty"`
	State    core.State `json:"state,omitempty"`
	Deadline *time.Time `json:"deadline,omitempty"`
}

// encodeDocument renders q's document as Create stores it.
func encodeDocument(q *core.Question) ([]byte, error) {
	doc := storedDoc{Question: *q}
	doc.Answers, doc.Messages, doc.Resolution = nil, nil, nil
	return json.Marshal(&doc)
}

// withParts is f with the document and the resolution, read from keys
// of their own, under "doc" and "res" (each when found).
func withParts(f map[string]string, doc string, docFound bool, res string, resFound bool) map[string]string {
	if len(f) > 0 && docFound {
		f["doc"] = doc
	}
	if len(f) > 0 && resFound {
		f["res"] = res
	}
	return f
}

// decodeQuestion assembles question id from its hash f, which holds the
// document under "doc" and, once closed, the resolution under "res".
func decodeQuestion(id core.QuestionID, f map[string]string) (*core.Question, error) {
	doc, ok := f["doc"]
	if !ok {
		return nil, fmt.Errorf("question %s record has no document", id)
	}
	res, closed := f["res"]
	d := new(storedDoc) // the question and its shadows in one allocation
	if err := json.Unmarshal([]byte(doc), d); err != nil {
		return nil, fmt.Errorf("question %s document: %w", id, err)
	}
	q := &d.Question
	q.ID = id
	q.State = core.State(f["state"])
	q.Deadline = time.Time{}
	if v, ok := f["deadline"]; ok {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("question %s deadline: %w", q.ID, err)
		}
		q.Deadline = fromMS(ms)
	}
	q.Renotified, _ = strconv.Atoi(f["renot"])
	q.Version, _ = strconv.ParseInt(f["ver"], 10, 64)
	q.Resolution = nil
	if closed {
		q.Resolution = new(core.Resolution)
		if err := json.Unmarshal([]byte(res), q.Resolution); err != nil {
			return nil, fmt.Errorf("question %s resolution: %w", q.ID, err)
		}
	}

	q.Answers = nil
	for k, v := range f {
		if _, ok := strings.CutPrefix(k, "a:"); ok {
			a, err := decodeAnswer(q.ID, v)
			if err != nil {
				return nil, err
			}
			q.Answers = append(q.Answers, a)
		}
	}
	core.SortAnswers(q)

	q.Votes = nil
	for k, v := range f {
		if _, ok := strings.CutPrefix(k, "v:"); ok {
			var vote core.Vote
			if err := json.Unmarshal([]byte(v), &vote); err != nil {
				return nil, fmt.Errorf("question %s vote %s: %w", q.ID, k, err)
			}
			q.Votes = append(q.Votes, vote)
		}
	}
	core.SortVotes(q.Votes)

	// Cards in posting order.
	q.Messages = nil
	nm, _ := strconv.Atoi(f["nm"])
	for i := 1; i <= nm; i++ {
		n := strconv.Itoa(i)
		v, ok := f["m:"+n]
		if !ok {
			continue
		}
		m, err := readCard(v, f["mk:"+n], core.Surface(f["ms:"+n]))
		if err != nil {
			return nil, fmt.Errorf("question %s card %d: %w", q.ID, i, err)
		}
		q.Messages = append(q.Messages, m)
	}
	q.Normalize()
	return q, nil
}

func decodeAnswer(id core.QuestionID, v string) (core.ItemAnswer, error) {
	var a core.ItemAnswer
	if err := json.Unmarshal([]byte(v), &a); err != nil {
		return a, fmt.Errorf("question %s answer: %w", id, err)
	}
	return a, nil
}

// openMember places a question in the open index. The index is ordered by
// member bytes (ZRANGEBYLEX), and the member spells the listing order:
// "0" for hard to reverse or "1" otherwise, the created time as 16 hex
// digits of the millisecond count with its sign bit flipped (so byte order
// is time order, before 1970 too), then the id, which breaks ties. Members
// are unique, so a page cursor (the last member seen) never skips or
// repeats an item, and shards merge by plain string comparison.
func openMember(q *core.Question) string {
	class := "1"
	if q.Reversibility == core.HardToReverse {
		class = "0"
	}
	return class + ":" + sortableMS(q.CreatedAt.UnixMilli()) + ":" + string(q.ID)
}

func sortableMS(ms int64) string {
	var b [8]byte
	u := uint64(ms) ^ (1 << 63)
	for i := 7; i >= 0; i-- {
		b[i] = byte(u)
		u >>= 8
	}
	return hex.EncodeToString(b[:])
}

// validOpenMember reports whether s is shaped like openMember's output.
func validOpenMember(s string) bool {
	if len(s) != 1+1+16+1+core.IDLen || (s[0] != '0' && s[0] != '1') || s[1] != ':' || s[18] != ':' {
		return false
	}
	if _, err := hex.DecodeString(s[2:18]); err != nil {
		return false
	}
	return core.ValidID(openMemberID(s))
}

// openMemberID is the question id at the end of an open index member.
func openMemberID(m string) core.QuestionID { return core.QuestionID(m[19:]) }

// questionIDs reads a script's list of question ids.
func questionIDs(list []string) []core.QuestionID {
	ids := make([]core.QuestionID, len(list))
	for i, id := range list {
		ids[i] = core.QuestionID(id)
	}
	return ids
}

func msString(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
