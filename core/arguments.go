package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// CanonicalArguments returns the canonical form of a JSON value: keys
// sorted, no insignificant whitespace, numbers as written. Two requests
// that mean the same arguments hash the same.
//
// What argumentsValue refuses is refused: a value taken here is one that
// the hash, the card, the tool and the policy rules all read alike.
func CanonicalArguments(raw json.RawMessage) ([]byte, error) {
	v, err := argumentsValue(raw)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, Internal("canonical arguments", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// argumentsValue decodes arguments, numbers as written, refusing what
// strictJSON refuses, nesting beyond MaxArgumentsDepth and a number
// beyond a float64: the rules read
// numbers as float64 (ruleArgs), and one they cannot read would stop
// them, deny rules included, and hand the call to a person.
func argumentsValue(raw json.RawMessage) (any, error) {
	const op = "canonical arguments"
	if err := strictJSON(raw); err != nil {
		return nil, err
	}
	if d := jsonDepth(raw); d > MaxArgumentsDepth {
		return nil, Errorf(CodeInvalid, op, "arguments nest %d levels deep; the most is %d", d, MaxArgumentsDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, Errorf(CodeInvalid, op, "arguments are not valid JSON: %v", err)
	}
	if at, n, bad := outOfRange(v); bad {
		if len(n) > 40 {
			n = n[:39] + "…"
		}
		return nil, Errorf(CodeInvalid, op, "arguments hold the number %s%s, out of range for a 64-bit float (what policy rules read numbers as)", n, where(at))
	}
	return v, nil
}

// where is " at" the pointer, for a message; nothing for the root.
func where(at jsontext.Pointer) string {
	if at == "" {
		return ""
	}
	return fmt.Sprintf(" at %q", string(at))
}

// strictJSON refuses whatever the strict parser refuses: a key given
// twice (a tool keeping the first would run what the card and the rules,
// seeing the last, never showed), bad UTF-8 and half a \u surrogate
// pair (encoding/json reads both as U+FFFD, so "\ud800" and "\ufffd"
// would hash alike), and anything after the value ("{}]" read as {}).
func strictJSON(raw json.RawMessage) error {
	const op = "canonical arguments"
	if jsontext.Value(raw).IsValid() { // a pooled decoder: the usual case costs no allocation
		return nil
	}
	_, err := jsontext.NewDecoder(bytes.NewReader(raw)).ReadValue()
	var syn *jsontext.SyntacticError
	switch {
	case err == nil: // one value read whole, and more after it
		return Errorf(CodeInvalid, op, "arguments hold more than one JSON value: text follows the value")
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return Errorf(CodeInvalid, op, "arguments give the key %q twice", syn.JSONPointer.LastToken())
	case errors.As(err, &syn) && strings.Contains(syn.Err.Error(), "invalid UTF-8"):
		return Errorf(CodeInvalid, op, "arguments are not valid UTF-8")
	case errors.As(err, &syn) && strings.Contains(syn.Err.Error(), "surrogate"):
		return Errorf(CodeInvalid, op, "arguments hold half a UTF-16 surrogate pair%s: escape a character beyond U+FFFF as a whole pair", where(syn.JSONPointer))
	case errors.As(err, &syn):
		return Errorf(CodeInvalid, op, "arguments are not valid JSON (at byte %d): %v", syn.ByteOffset, syn.Err)
	}
	return Errorf(CodeInvalid, op, "arguments are not valid JSON: %v", err)
}

// HashArguments returns the hex SHA-256 of the canonical arguments, and
// the canonical arguments themselves.
func HashArguments(raw json.RawMessage) (string, []byte, error) {
	c, err := CanonicalArguments(raw)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), c, nil
}

// MaxArgumentsDepth bounds how deeply arguments may nest. Indenting JSON
// for people (PrettyJSON) writes each line's depth again, so its size
// grows with the square of the depth: 16 KiB of brackets 8,000 deep
// indents to 128 MB, on every card and console page that shows them.
// Tool arguments nest a handful of levels; 64 leaves room.
const MaxArgumentsDepth = 64

// jsonDepth is how deeply valid JSON raw nests: 0 for a scalar, 1 for
// [] or {"a":1}. It reads the bytes alone (strings skipped, escapes and
// all), so it costs no allocation on the ask's path.
func jsonDepth(raw []byte) int {
	depth, most, inString := 0, 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			most = max(most, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return most
}
