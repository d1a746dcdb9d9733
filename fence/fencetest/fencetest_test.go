package fencetest_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/fence"
	"github.com/askbridge/askbridge/fence/fencetest"
)

// recorder is a testing.TB that keeps the failures it is told of.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// failures runs check against a fresh recorder and returns what it was
// told.
func failures(t *testing.T, check func(tb testing.TB)) []string {
	r := &recorder{TB: t}
	check(r)
	return r.errs
}

// TestHarnessCatchesEveryLeak proves the harness itself: a person's words
// pass inside a region of fence's making, in a resume, in a message of
// server lines and regions, or as a JSON string that is one region; bare,
// in a region that was not cleaned, or in a JSON value that is not a
// region (unless its key is exempt), they fail; and a carried marker that
// no check saw fenced fails CheckCarried, on each Apart's own record.
func TestHarnessCatchesEveryLeak(t *testing.T) {
	mk := fencetest.New()
	text := mk.Carried("an answer")
	name := mk.Dropped("a name")
	region := fence.Wrap(fence.TagAnswer, text).String()
	resume, err := fence.BuildResume(fence.ResumeInput{QuestionID: "q1", Verb: fence.VerbAnswered, Closer: fence.CloserPerson,
		DeciderName: name, Body: text})
	if err != nil {
		t.Fatal(err)
	}
	doc := func(v any) []byte {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	args := doc(map[string]any{"text": region, "approved_arguments": map[string]any{"to": text},
		"hookSpecificOutput": map[string]any{"rules": []any{map[string]any{"ruleContent": text}}}})

	text2 := mk.Apart()
	for _, c := range []struct {
		name  string
		check func(tb testing.TB)
		fails bool
	}{
		{"a resume", func(tb testing.TB) { mk.Check(tb, "resume", resume.Text) }, false},
		{"one region", func(tb testing.TB) { mk.Check(tb, "region", region) }, false},
		{"server lines and a region", func(tb testing.TB) { mk.Check(tb, "message", "The question was closed:\n"+region) }, false},
		{"bare text", func(tb testing.TB) { mk.Check(tb, "bare", text) }, true},
		{"a name cut short, bare", func(tb testing.TB) { mk.Check(tb, "name", string([]rune(name)[:fence.MaxNameRunes])) }, true},
		{"a region not cleaned", func(tb testing.TB) {
			mk.Check(tb, "uncleaned", "<askbridge-untrusted-answer>\n"+text+"\n</askbridge-untrusted-answer>")
		}, true},
		{"server lines and bare text", func(tb testing.TB) { mk.Check(tb, "message", "The question was closed:\n"+region+"\n"+text) }, true},
		{"JSON with its arguments exempt", func(tb testing.TB) {
			mk.CheckJSON(tb, "json", args, fencetest.ApprovedArguments, "hookSpecificOutput.rules[].ruleContent")
		}, false},
		{"JSON with a path exempt that ends no value's path", func(tb testing.TB) {
			mk.CheckJSON(tb, "json", args, fencetest.ApprovedArguments, "rules[].ruleContent[]")
		}, true},
		{"JSON with nothing exempt", func(tb testing.TB) { mk.CheckJSON(tb, "json", args) }, true},
		{"a JSON key", func(tb testing.TB) {
			mk.CheckJSON(tb, "json", doc(map[string]any{text: "x"}), fencetest.ApprovedArguments)
		}, true},
		{"a JSON string in an array", func(tb testing.TB) { text2.CheckJSON(tb, "json", doc([]any{1, []any{text}})) }, true},
	} {
		errs := failures(t, c.check)
		if (len(errs) > 0) != c.fails {
			t.Errorf("%s: failures %q; want failing %v", c.name, errs, c.fails)
		}
		if c.fails && (len(errs) == 0 || !strings.Contains(errs[0], "is outside any fence")) {
			t.Errorf("%s: %q does not say a marker is outside a fence", c.name, errs)
		}
	}
	if errs := failures(t, func(tb testing.TB) { mk.CheckCarried(tb, "the agent") }); len(errs) != 0 {
		t.Errorf("the answer was seen fenced, the name need not be: %q", errs)
	}
	// text2 saw the answer only bare.
	errs := failures(t, func(tb testing.TB) { text2.CheckCarried(tb, "the other output") })
	if len(errs) != 1 || !strings.Contains(errs[0], "the marker planted in an answer never reached the other output") {
		t.Errorf("a record Apart that never saw the answer fenced: %q", errs)
	}
	// A marker planted later through either is the other's too.
	mk.Carried("a late reason")
	if got := text2.Unseen(); len(got) != 2 || got[1] != "a late reason" {
		t.Errorf("Unseen on the Apart: %q", got)
	}
}
