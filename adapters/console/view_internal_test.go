package console

import (
	"slices"
	"testing"
)

// isolable drops only the U+2069 that would close an isolate the text did
// not open (the <bdi>'s own); the text's own isolates, and all else, stay.
func TestIsolableDropsOnlyAPopOfAnIsolateTheTextDidNotOpen(t *testing.T) {
	for in, want := range map[string]string{
		"eu-west-1":                  "eu-west-1",
		"eu-west-1\u202e":            "eu-west-1\u202e",
		"b\u2069\u202e":              "b\u202e",
		"\u2068name\u2069 said":      "\u2068name\u2069 said",
		"\u2067a\u2069\u2069\u202ex": "\u2067a\u2069\u202ex",
		"\u2069\u2066x\u2069":        "\u2066x\u2069",
	} {
		if got := isolable(in); got != want {
			t.Errorf("isolable(%+q) = %+q, want %+q", in, got, want)
		}
	}
}

// namedLine cuts a line at every name in it, the earliest first and, of
// two names at one place, the longer; a line without names is one piece.
func TestNamedLineIsolatesEveryName(t *testing.T) {
	for _, c := range []struct {
		line  string
		names []string
		want  line
	}{
		{"Timed out on 09:00", []string{"alice"}, line{{Text: "Timed out on 09:00"}}},
		{"Answered by al on 09:00", []string{"", "al"}, line{{Text: "Answered by "}, {Text: "al", Name: true}, {Text: " on 09:00"}}},
		{"by 2 of 2: bo, bob", []string{"bo", "bob"}, line{{Text: "by 2 of 2: "}, {Text: "bo", Name: true}, {Text: ", "}, {Text: "bob", Name: true}}},
		{"bob", []string{"bob"}, line{{Text: "bob", Name: true}}},
	} {
		if got := namedLine(c.line, c.names); !slices.Equal(got, c.want) {
			t.Errorf("namedLine(%q, %q) = %+v, want %+v", c.line, c.names, got, c.want)
		}
	}
}
