package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
)

// maxLine bounds one line of an export: an event with its payload and
// chain is far smaller.
const maxLine = 16 << 20

// Lines reads an NDJSON export (GET /v1/audit/export: one event a line)
// and hands each event to yield, stopping at yield's first error. A line
// that is not an event is an error naming its line number: one that is
// not JSON, is too long, lacks a kind or seq, or holds a key that is not
// exactly one of the event's (see shape).
func Lines(r io.Reader, yield func(core.Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 1
	for ; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e core.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("line %d is not an event of the log: %w", line, err)
		}
		if e.Kind == "" || e.Seq <= 0 {
			return fmt.Errorf("line %d is not an event of the log: it has no kind or seq", line)
		}
		if err := eventShape.check(sc.Bytes()); err != nil {
			return fmt.Errorf("line %d is not an event as the log writes it: %w", line, err)
		}
		if err := yield(e); err != nil {
			return err
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("line %d is not an event of the log: it is longer than %d bytes", line, maxLine)
	} else if err != nil {
		return err
	}
	return nil
}

// shape is the keys a JSON object may hold, as json.Marshal writes
// them, and the shapes of those whose value is an object of ours.
//
// Why a line is held to it: the digest covers an event as decoding
// reads it, and decoding forgives. It drops a key it does not know,
// takes the last of a key given twice, and reads a key in any case as
// the field's ("Actor" as actor). A reader of the file (jq, a SIEM, a
// person) reads every key as written. So without this, verify would
// vouch for a line that says more than the event it checked: an
// "approved_by" of nobody's, or an "Actor" naming someone else beside
// the actor the digest covers. Anything else a re-encoding would
// change (spacing, key order, escapes) reads the same everywhere.
type shape struct {
	keys   map[string]bool
	nested map[string]*shape
}

// eventShape is core.Event's, with its chain's.
var eventShape = shapeOf(reflect.TypeFor[core.Event](), map[string]reflect.Type{"chain": reflect.TypeFor[core.Chain]()})

// shapeOf reads t's JSON keys from its field tags; nested names the keys
// whose value is an object to hold to a shape of its own.
func shapeOf(t reflect.Type, nested map[string]reflect.Type) *shape {
	s := &shape{keys: map[string]bool{}, nested: map[string]*shape{}}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || name == "-":
			continue
		case name == "":
			name = f.Name
		}
		s.keys[name] = true
		if n, ok := nested[name]; ok {
			s.nested[name] = shapeOf(n, nil)
		}
	}
	return s
}

// check reads doc's keys as json.Unmarshal reads them, and refuses one
// that is none of s's or comes twice. doc is a line json.Unmarshal took
// whole, so valid JSON, and an object (an event is one): a value is
// passed over by its quotes and brackets alone, not decoded a second
// time, which cost five times what json.Unmarshal does on every line of
// an export.
func (s *shape) check(doc []byte) error {
	_, err := s.object(doc, skipSpace(doc, 0))
	return err
}

// object checks the object that starts at doc[i] and returns the index
// just after it.
func (s *shape) object(doc []byte, i int) (int, error) {
	seen := make(map[string]bool, len(s.keys))
	for i = skipSpace(doc, i+1); doc[i] != '}'; {
		end := stringEnd(doc, i)
		k := key(doc[i:end])
		switch {
		case !s.keys[k]:
			return 0, fmt.Errorf("it holds the key %q, which is none of the event's (their case counts)", k)
		case seen[k]:
			return 0, fmt.Errorf("it holds the key %q twice", k)
		}
		seen[k] = true
		i = skipSpace(doc, skipSpace(doc, end)+1) // past the ":"
		if n := s.nested[k]; n != nil && doc[i] == '{' {
			var err error
			if i, err = n.object(doc, i); err != nil {
				return 0, fmt.Errorf("its %s: %w", k, err)
			}
		} else {
			i = valueEnd(doc, i)
		}
		if i = skipSpace(doc, i); doc[i] == ',' {
			i = skipSpace(doc, i+1)
		}
	}
	return i + 1, nil
}

// key is what the JSON string quoted spells, as json.Unmarshal reads it
// (escapes decoded, invalid UTF-8 replaced).
func key(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 && utf8.Valid(quoted) {
		return string(quoted[1 : len(quoted)-1])
	}
	var k string
	_ = json.Unmarshal(quoted, &k) // valid JSON: its line was taken whole
	return k
}

// skipSpace is the index of the first byte from doc[i] on that is not
// JSON's whitespace.
func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index just after the JSON string that starts at doc[i].
func stringEnd(doc []byte, i int) int {
	for i++; doc[i] != '"'; i++ {
		if doc[i] == '\\' {
			i++ // an escaped quote or backslash ends nothing
		}
	}
	return i + 1
}

// valueEnd is the index just after the JSON value that starts at doc[i].
func valueEnd(doc []byte, i int) int {
	switch doc[i] {
	case '"':
		return stringEnd(doc, i)
	case '{', '[':
		for depth := 0; ; i++ {
			switch doc[i] {
			case '"':
				i = stringEnd(doc, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	// A number, true, false or null: it runs to what ends a value.
	for i < len(doc) && !strings.ContainsRune(",}] \t\n\r", rune(doc[i])) {
		i++
	}
	return i
}
