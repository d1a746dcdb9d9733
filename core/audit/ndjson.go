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

	"github.com/askbridge/askbridge/core"
)

// maxLine bounds one line of an export: an event with its payload and
// chain is far smaller.
const maxLine = 16 << 20

// Lines reads an NDJSON export (GET /v1/audit/export: one event a line)
// and hands each event to yield, stopping at yield's first error. A line
// that is not an event is an error naming its line number: one that is
// not JSON, is too long, lacks a kind or seq, or holds a key that is not
// exactly one of the event's (see eventShape).
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

// check reads doc, a JSON object that json.Unmarshal took, key by key.
func (s *shape) check(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if _, err := dec.Token(); err != nil { // the "{"
		return err
	}
	seen := make(map[string]bool, len(s.keys))
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := t.(string) // an object's keys are strings
		switch {
		case !s.keys[k]:
			return fmt.Errorf("it holds the key %q, which is none of the event's (their case counts)", k)
		case seen[k]:
			return fmt.Errorf("it holds the key %q twice", k)
		}
		seen[k] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if n := s.nested[k]; n != nil && bytes.HasPrefix(v, []byte("{")) {
			if err := n.check(v); err != nil {
				return fmt.Errorf("its %s: %w", k, err)
			}
		}
	}
	return nil
}
