package bolt

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/askbridge/askbridge/core"
)

// questionHead is what a change's compare-and-set reads of a stored
// question record: its layout, the question's version and its state.
type questionHead struct {
	V     int
	Ver   int64
	State core.State
}

// decodeHead reads a question record's head inside the one writer's
// transaction, which every answer waits behind, so it reads as little
// as it can: a record's layout, version and state come before the
// question (encodeQuestion), and reading stops there. Records written
// before that order have the state only inside the question and the
// version after it; for those it reads on, skipping what it does not
// need. Before, the head was json.Unmarshal'ed: a whole pass to validate
// the record, then another to pick the three fields out.
func decodeHead(b []byte) (questionHead, error) {
	h, err := readHead(b)
	if err != nil {
		return h, fmt.Errorf("decode question: %w", err)
	}
	return h, checkVersion("question", h.V)
}

// headDecoders keeps decoders (and their buffers) between compares.
var headDecoders = sync.Pool{New: func() any { return jsontext.NewDecoder(bytes.NewReader(nil)) }}

var errNoHead = errors.New("a question record is not a JSON object")

func readHead(b []byte) (questionHead, error) {
	var h questionHead
	d := headDecoders.Get().(*jsontext.Decoder)
	// Names are not checked for repeats (the check is a third of the
	// read): this store writes every record, each name once.
	d.Reset(bytes.NewBuffer(b), jsontext.AllowDuplicateNames(true))
	defer func() {
		d.Reset(bytes.NewReader(nil))
		headDecoders.Put(d)
	}()
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return h, errors.Join(errNoHead, err)
	}
	stated := false // the record's own "state" was read
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return h, err
		}
		switch name.String() {
		case "v":
			v, err := readInt(d)
			if err != nil {
				return h, err
			}
			h.V = int(v)
		case "ver":
			if h.Ver, err = readInt(d); err != nil {
				return h, err
			}
		case "state":
			t, err := readKind(d, '"')
			if err != nil {
				return h, err
			}
			h.State, stated = core.State(t.String()), true
		case "q":
			if stated {
				// The layout with the head first: what follows is the
				// question, and ver (omitted at 0) came before it.
				return h, nil
			}
			if h.State, err = stateIn(d); err != nil {
				return h, err
			}
		default:
			if err := d.SkipValue(); err != nil {
				return h, err
			}
		}
	}
	_, err := d.ReadToken() // the closing brace, or what is there instead
	return h, err
}

// readKind reads the next token and refuses one not of kind k.
func readKind(d *jsontext.Decoder, k jsontext.Kind) (jsontext.Token, error) {
	t, err := d.ReadToken()
	if err == nil && t.Kind() != k {
		err = fmt.Errorf("%s where %s belongs", t.Kind(), k)
	}
	return t, err
}

// readInt reads the next token as an integer.
func readInt(d *jsontext.Decoder) (int64, error) {
	t, err := readKind(d, '0')
	if err != nil {
		return 0, err
	}
	return t.Int()
}

// stateIn reads a question object, as records of the earlier layout
// hold it, for its state.
func stateIn(d *jsontext.Decoder) (core.State, error) {
	var state core.State
	if _, err := readKind(d, '{'); err != nil {
		return "", err
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return "", err
		}
		if name.String() != "state" {
			if err := d.SkipValue(); err != nil {
				return "", err
			}
			continue
		}
		t, err := readKind(d, '"')
		if err != nil {
			return "", err
		}
		state = core.State(t.String())
	}
	_, err := readKind(d, '}')
	return state, err
}
