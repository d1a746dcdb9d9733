package app

import (
	"bytes"
	"errors"
	"io"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// The YAML decoder's errors quote what it read: the first 7 characters
// of a value of the wrong type (the whole of one of 10 or fewer), and the
// whole of a key it does not know. A refused file's error goes to the
// log, the reconfigured event (which observers read) and the digest
// endpoint, and what it quotes may be a secret: an ntfy topic written as
// a string where a list goes, a token written without its "token:" (a
// flow mapping reads a bare value as a key). So the line and the type
// stay, and the value goes; a key is named only if it is spelt as the
// file's keys are, so that a misspelt one is still named.
var (
	quotedValue  = regexp.MustCompile("(?s)^(line [0-9]+: cannot unmarshal [^ ]+) `.*`( into [^ ]+)$")
	unknownField = regexp.MustCompile(`(?s)^(line [0-9]+): field (.*) not found in (type [^ ]+)$`)
	keySpelling  = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
)

// decodeError is err, the decoder's, with the values it quotes left out.
func decodeError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	out := &yaml.TypeError{Errors: make([]string, len(te.Errors))}
	for i, e := range te.Errors {
		out.Errors[i] = unquoted(e)
	}
	return out
}

// unquoted is one of the decoder's errors without the value it quotes.
func unquoted(e string) string {
	if m := quotedValue.FindStringSubmatch(e); m != nil {
		return m[1] + m[2]
	}
	if m := unknownField.FindStringSubmatch(e); m != nil && !keySpelling.MatchString(m[2]) {
		return m[1] + ": an unknown key (not shown: it is not spelt as the file's keys are, and may be a secret written without its key) in " + m[3]
	}
	return e
}

// holdsNothing reports whether raw holds no YAML document, or one with
// nothing written in it: nothing but blanks, comments and a document's
// "---", which parseFile reads as a configuration of nothing (no route of
// the file's, no token). A file cut short after its opening comments, or
// after the "---" that begins many a generated file, is one.
func holdsNothing(raw []byte) bool {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&doc); err != nil {
		return errors.Is(err, io.EOF)
	}
	// A document with no node written in it reads as an implicit null: one
	// spelt out (null, ~) is written on purpose and is left to parseFile.
	if len(doc.Content) != 1 {
		return false
	}
	n := doc.Content[0]
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" && n.Value == ""
}
