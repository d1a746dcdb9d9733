package redis

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
)

// A question is one hash. What never changes is one JSON document written
// by Go ("doc"); what changes is kept in fields of its own that the
// scripts compare and set without parsing JSON:
//
//	doc          the question as created (JSON)
//	state        open | answered | declined | timed_out | expired | cancelled
//	deadline     deadline in ms (absent: none)
//	renot        how many renotices were counted
//	run          run id (for the run-open index)
//	om           the question's member of the open index
//	closed       closed ms, once closed
//	res          the resolution (JSON), once closed
//	ni, na       form items asked, answered
//	a:<item>     a form item's answer (JSON)
//	v:<voter>    a vote (JSON), one per voter (core.Vote.Key)
//	vc:<choice>  votes for one choice; nv votes in all
//	nm           cards recorded
//	m:<n>        card n as an update delivery without key and time (JSON
//	             members without the braces), so a script can enqueue its
//	             edit by concatenation
//	ms:<n>       card n's surface, naming its outbox
//	md:<key>     n of the card posted by delivery key (repeat detection)
//	ver          changes so far, part of update delivery keys
//	ev           stream ids of the question's events, space-separated (purge
//	             drops them with the question)
//
// Counters that are zero (renot, ni, na, nm, ver) are not stored: a
// missing one reads as 0. Records written by earlier versions store them
// all, plus a "created" field nothing reads, and keep their event ids in a
// list key of their own (keys.go); both layouts read the same.

// cardFragment is the stored form of a card: an update delivery for it,
// less the key and time that each transition adds.
type cardFragment struct {
	Kind       core.DeliveryKind `json:"kind"`
	Surface    core.Surface      `json:"surface"`
	Room       string            `json:"room,omitempty"`
	QuestionID string            `json:"question_id"`
	Message    *core.MessageRef  `json:"message"`
}

func renderCard(id string, ref core.MessageRef) (string, error) {
	b, err := json.Marshal(cardFragment{
		Kind:       core.DeliverUpdate,
		Surface:    ref.Surface,
		Room:       ref.Room,
		QuestionID: id,
		Message:    &ref,
	})
	if err != nil {
		return "", err
	}
	return string(b[1 : len(b)-1]), nil
}

// decodeQuestion assembles a question from its hash.
func decodeQuestion(f map[string]string) (*core.Question, error) {
	doc, ok := f["doc"]
	if !ok {
		return nil, errors.New("question record has no document")
	}
	q := new(core.Question)
	if err := json.Unmarshal([]byte(doc), q); err != nil {
		return nil, fmt.Errorf("question document: %w", err)
	}
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
	q.Resolution = nil
	if v, ok := f["res"]; ok {
		q.Resolution = new(core.Resolution)
		if err := json.Unmarshal([]byte(v), q.Resolution); err != nil {
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
	sortAnswers(q)

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
		v, ok := f["m:"+strconv.Itoa(i)]
		if !ok {
			continue
		}
		var c cardFragment
		if err := json.Unmarshal([]byte("{"+v+"}"), &c); err != nil || c.Message == nil {
			return nil, fmt.Errorf("question %s card %d: %v", q.ID, i, err)
		}
		q.Messages = append(q.Messages, *c.Message)
	}
	q.Normalize()
	return q, nil
}

// sortAnswers puts answers in item order; any answer to an item the
// question does not list (there should be none) follows, by item id,
// rather than vanish.
func sortAnswers(q *core.Question) {
	if len(q.Answers) < 2 {
		return
	}
	ids := q.PartIDs() // form items, or a batch's calls
	rank := make(map[string]int, len(ids))
	for i, id := range ids {
		rank[id] = i
	}
	pos := func(a core.ItemAnswer) int {
		if i, ok := rank[a.ItemID]; ok {
			return i
		}
		return len(ids)
	}
	slices.SortStableFunc(q.Answers, func(a, b core.ItemAnswer) int {
		if c := cmp.Compare(pos(a), pos(b)); c != 0 {
			return c
		}
		return strings.Compare(a.ItemID, b.ItemID)
	})
}

func decodeAnswer(id, v string) (core.ItemAnswer, error) {
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
	return class + ":" + sortableMS(q.CreatedAt.UnixMilli()) + ":" + q.ID
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
	return core.ValidID(s[19:])
}

func msString(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
