package app

import (
	"bytes"
	"errors"
	"fmt"
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
// file's keys are, so that a misspelt one is still named. An unknown key
// is placed by the YAML path it stands at, not by the Go type the decoder
// names, which says nothing to whoever wrote the file (config_keys.go).
var (
	quotedValue  = regexp.MustCompile("(?s)^(line [0-9]+: cannot unmarshal [^ ]+) `.*`( into [^ ]+)$")
	unknownField = regexp.MustCompile(`(?s)^(line [0-9]+): field (.*) not found in type [^ ]+$`)
	keySpelling  = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
)

// decodeError is err, the decoder's error decoding raw, with the values
// it quotes left out and its unknown keys placed by their YAML paths.
func decodeError(err error, raw []byte) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	var paths keyPaths
	out := &yaml.TypeError{Errors: make([]string, len(te.Errors))}
	for i, e := range te.Errors {
		if m := quotedValue.FindStringSubmatch(e); m != nil {
			out.Errors[i] = m[1] + m[2]
			continue
		}
		m := unknownField.FindStringSubmatch(e)
		if m == nil {
			out.Errors[i] = e
			continue
		}
		if paths == nil {
			paths = unknownKeyPaths(raw)
		}
		path, found := paths.take(e)
		out.Errors[i] = m[1] + ": " + unknownKey(m[2], path, found)
	}
	return out
}

// unknownKey is the decoder's words for key, unknown, with the Go type
// it names replaced by the YAML path of the mapping that holds the key
// (the top level when path is ""; no place when not found).
func unknownKey(key, path string, found bool) string {
	where := ""
	switch {
	case found && path == "":
		where = " at the top level"
	case found:
		where = " in " + path
	}
	if !keySpelling.MatchString(key) {
		return "an unknown key (not shown: it is not spelt as the file's keys are, and may be a secret written without its key)" + where
	}
	return "field " + key + " not found" + where
}

// refuseNothing refuses raw, the file at path, when it holds nothing
// (holdsNothing), in a reload's words; any other file it leaves to
// parseFile. At start such a file is a valid configuration of nothing; on
// a reload it is one caught mid-write (a shell's > truncates it first, a
// write cut short may end after its opening comments or its ---), which
// would take every token and route away. config check says the same of
// it, as the replicas it is rolled out to will.
func refuseNothing(path string, raw []byte) error {
	if !holdsNothing(raw) {
		return nil
	}
	return fmt.Errorf("%s is empty (nothing but blanks, comments or ---): the running configuration stays; write it whole (to a temporary file, then mv)", path)
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
