package redis

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
)

// A posted card is three fields of its question's hash, each short enough
// for Redis's compact (listpack) encoding of small hashes, which takes
// values of up to 64 bytes (hash-max-listpack-value):
//
//	ms:<n>  its surface, naming the outbox its edits go to
//	mk:<n>  the key of the delivery that posted it (repeat detection)
//	m:<n>   the rest of it, packed (pack.go): room, message id, time, kind
//	        and repeat mark
//
// A close enqueues a card's edit as the m:<n> value, packSep and the
// mk:<n> value, in one stream field, so the script only concatenates;
// decodeDelivery unpacks it.
//
// Earlier versions stored m:<n> as the whole update delivery rendered as
// JSON members without the braces (cardFragment) and no mk:<n>, finding
// repeats by an md:<delivery key> field instead. Those read as before,
// and a card whose room, id or kind holds packSep is still stored so. A
// fragment starts with a double quote, a packed card never does (a room
// id starting with one is stored as a fragment too).

// cardParts is how many parts a packed card has.
const cardParts = 5

// cardFragment is the stored form of a card in earlier versions: an
// update delivery for it, less the key and time that each transition adds.
type cardFragment struct {
	Kind       core.DeliveryKind `json:"kind"`
	Surface    core.Surface      `json:"surface"`
	Room       string            `json:"room,omitempty"`
	QuestionID core.QuestionID   `json:"question_id"`
	Message    *core.MessageRef  `json:"message"`
}

func renderCard(id core.QuestionID, ref core.MessageRef) (string, error) {
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

// storeCard is the m:<n> value of a card: packed, or a fragment when a
// part would not survive packing.
func storeCard(id core.QuestionID, ref core.MessageRef) (string, error) {
	at, err := packTime(ref.At)
	if err != nil {
		return "", err
	}
	repeat := ""
	if ref.Repeat {
		repeat = "1"
	}
	if v, ok := pack(ref.Room, ref.ID, at, string(ref.Kind), repeat); ok && !isFragment(v) {
		return v, nil
	}
	return renderCard(id, ref)
}

// appendPackedCard appends ref packed, as storeCard stores it, to b, or
// reports false if it does not pack (storeCard then renders a fragment).
// It is storeCard's packed case without the intermediate strings.
func appendPackedCard(b []byte, ref core.MessageRef) ([]byte, bool) {
	if _, off := ref.At.Zone(); off != 0 || !time.Unix(0, ref.At.UnixNano()).Equal(ref.At) {
		return nil, false // a time packTime writes as text: left to storeCard
	}
	for _, p := range [...]string{ref.Room, ref.ID, string(ref.Kind)} {
		if strings.Contains(p, packSep) || !utf8.ValidString(p) {
			return nil, false
		}
	}
	if strings.HasPrefix(ref.Room, `"`) {
		return nil, false // it would read as a fragment
	}
	if b == nil {
		b = make([]byte, 0, len(ref.Room)+len(ref.ID)+len(ref.Kind)+len(ref.Delivery)+24)
	}
	b = append(append(b, ref.Room...), packSep...)
	b = append(append(b, ref.ID...), packSep...)
	b = append(strconv.AppendInt(b, ref.At.UnixNano(), 36), packSep...)
	b = append(append(b, ref.Kind...), packSep...)
	if ref.Repeat {
		b = append(b, '1')
	}
	return b, true
}

// isFragment reports whether a stored card is a JSON fragment.
func isFragment(v string) bool { return strings.HasPrefix(v, `"`) }

// readCard reads a stored card: v is its m:<n> value, key its mk:<n>
// value and surface its ms:<n> value (neither is used for a fragment,
// which holds them).
func readCard(v, key string, surface core.Surface) (core.MessageRef, error) {
	if isFragment(v) {
		var c cardFragment
		if err := json.Unmarshal([]byte("{"+v+"}"), &c); err != nil {
			return core.MessageRef{}, err
		}
		if c.Message == nil {
			return core.MessageRef{}, errors.New("card without a message")
		}
		return *c.Message, nil
	}
	p, err := unpack(v, cardParts)
	if err != nil {
		return core.MessageRef{}, err
	}
	return packedCard(p, key, surface)
}

// packedCard is the card of a packed card's parts.
func packedCard(p []string, key string, surface core.Surface) (core.MessageRef, error) {
	at, err := unpackTime(p[2])
	if err != nil {
		return core.MessageRef{}, err
	}
	return core.MessageRef{Surface: surface, Room: p[0], ID: p[1], Delivery: key,
		Kind: core.DeliveryKind(p[3]), Repeat: p[4] == "1", At: at}, nil
}

// cardUpdate is the update delivery a script enqueued for a card as u
// (the card's m:<n> value, then packSep and its mk:<n> value when it has
// one), with key k and time t (a JSON string).
func cardUpdate(surface core.Surface, u, k, t string) (core.Delivery, error) {
	var d core.Delivery
	if isFragment(u) {
		frag, _, _ := strings.Cut(u, packSep) // JSON never holds a raw control character
		if err := json.Unmarshal([]byte("{"+frag+"}"), &d); err != nil {
			return d, err
		}
	} else {
		// The packed card's parts hold no packSep, so what follows its
		// last part is the delivery key, whatever it holds.
		p, err := unpack(u, cardParts+1)
		if err != nil {
			return d, err
		}
		ref, err := packedCard(p, p[cardParts], surface)
		if err != nil {
			return d, err
		}
		qid, _, _ := strings.Cut(k, "/") // "<question id>/update/<ver>/<n>"
		d = core.Delivery{Kind: core.DeliverUpdate, Surface: surface, Room: ref.Room, QuestionID: core.QuestionID(qid), Message: &ref}
	}
	d.Key = k
	err := json.Unmarshal([]byte(t), &d.CreatedAt)
	return d, err
}
