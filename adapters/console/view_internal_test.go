package console

import "testing"

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
