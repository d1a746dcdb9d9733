package audit_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
)

// export is log as GET /v1/audit/export writes it: one json.Marshal'd
// event a line.
func export(t testing.TB, log []core.Event) []string {
	t.Helper()
	lines := make([]string, len(log))
	for i, e := range log {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines[i] = string(b)
	}
	return lines
}

// readLines is Lines over lines, and the events it yielded.
func readLines(lines []string) ([]core.Event, error) {
	var evs []core.Event
	err := audit.Lines(strings.NewReader(strings.Join(lines, "\n")+"\n"), func(e core.Event) error {
		evs = append(evs, e)
		return nil
	})
	return evs, err
}

func TestExportLinesVerify(t *testing.T) {
	log := chainLog(t, 5, 1)
	lines := export(t, log)
	lines[2] += "\r" // a file that passed through an editor on Windows
	evs, err := readLines(append(lines[:2:2], append([]string{""}, lines[2:]...)...))
	if err != nil {
		t.Fatal(err)
	}
	if rep := verify(t, evs, audit.Options{}); rep.Break != nil || rep.Events != 5 {
		t.Fatalf("an honest export: %+v", rep)
	}
}

// TestExportLineSaysNoMoreThanItsEvent: the digest covers an event's
// fields as decoding reads them, so a line must say nothing else: a key
// no event has, a key twice, or one spelled in another case (which Go
// reads as the event's own, while jq, a SIEM or a person reads it as
// written). Before, such a line was taken, and verify said the chain
// held over a line that named someone else or carried words of nobody's.
func TestExportLineSaysNoMoreThanItsEvent(t *testing.T) {
	for name, tc := range map[string]struct{ from, to, why string }{
		"a key no event has":          {`"actor":"p-1"`, `"actor":"p-1","approved_by":"the CFO"`, `key "approved_by"`},
		"a key in another case":       {`"actor":"p-1"`, `"Actor":"p-mallory","actor":"p-1"`, `key "Actor"`},
		"a key twice":                 {`"actor":"p-1"`, `"actor":"p-mallory","actor":"p-1"`, `key "actor" twice`},
		"a chain key no chain has":    {`"stream":0`, `"stream":0,"verified":true`, `key "verified"`},
		"a chain key twice":           {`"stream":0`, `"stream":7,"stream":0`, `key "stream" twice`},
		"a chain key in another case": {`"stream":0`, `"Stream":7,"stream":0`, `key "Stream"`},
	} {
		t.Run(name, func(t *testing.T) {
			lines := export(t, chainLog(t, 4, 1))
			if !strings.Contains(lines[2], tc.from) {
				t.Fatalf("line 3 has no %s: %s", tc.from, lines[2])
			}
			lines[2] = strings.Replace(lines[2], tc.from, tc.to, 1)
			evs, err := readLines(lines)
			if err == nil {
				rep := verify(t, evs, audit.Options{})
				t.Fatalf("the line was taken (the chain's break: %+v)", rep.Break)
			}
			if !strings.Contains(err.Error(), "line 3 ") || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("err = %v; want it to name line 3 and %s", err, tc.why)
			}
		})
	}
}

// TestExportLineTooLongIsNamed: a line longer than any event is an
// error that names it, like every other line that is not an event.
// Before, it was bufio's bare "token too long", naming nothing.
func TestExportLineTooLongIsNamed(t *testing.T) {
	lines := export(t, chainLog(t, 3, 1))
	lines = append(lines[:2:2], `{"seq":3,"reason":"`+strings.Repeat("x", 17<<20)+`"}`, lines[2])
	_, err := readLines(lines)
	if err == nil || !strings.Contains(err.Error(), "line 3 ") {
		t.Fatalf("err = %v; want it to name line 3", err)
	}
}

// TestExportLinesNotEventsAreNamed: whatever a line holds, reading it
// is an error naming it, never a panic.
func TestExportLinesNotEventsAreNamed(t *testing.T) {
	good := export(t, chainLog(t, 1, 1))[0]
	for _, bad := range []string{
		"not json", "{", "[]", "null", "42", `"seq"`, " ", "\x00", "\xff\xfe",
		`{"seq":1}`, `{"kind":"answered"}`, `{"seq":-1,"kind":"answered"}`,
		`{"seq":1,"kind":"answered","chain":[]}`, `{"seq":1,"kind":"answered","chain":"x"}`,
		`{"seq":1,"kind":"answered","payload":}`, good + good, good + " x",
	} {
		_, err := readLines([]string{good, bad})
		if err == nil || !strings.Contains(err.Error(), "line 2 ") {
			t.Errorf("%q: err = %v; want it to name line 2", bad, err)
		}
	}
}

// FuzzLinesAndVerify: whatever a file holds, reading it and verifying
// what it held ends in an error or a report, never a panic; a line it
// refuses is named, and a file it takes re-exports to lines it takes.
func FuzzLinesAndVerify(f *testing.F) {
	log := purge(f, chainLog(f, 6, 2), 2, 3)
	lines := export(f, log)
	f.Add(strings.Join(lines, "\n"))
	f.Add(strings.Join(lines[1:], "\n") + "\n" + lines[0])
	f.Add(strings.Replace(lines[2], `"n":`, `"N":`, 1))
	f.Add(`{"seq":1,"kind":"checkpoint","chain":{"stream":-1,"n":1,"prev":"","witness":"9:ab","digest":"zz","hash":"","purged":"1:9::ab 3:2:x:y"}}`)
	f.Add(`{"seq":1,"kind":"answered","payload":{"a":1,"a":2},"chain":{"n":9223372036854775807,"witness":"9223372036854775807:00"}}`)
	f.Fuzz(func(t *testing.T, file string) {
		var evs []core.Event
		err := audit.Lines(strings.NewReader(file), func(e core.Event) error {
			evs = append(evs, e)
			return nil
		})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("the error names no line: %v", err)
			}
			return
		}
		for _, opt := range []audit.Options{{}, {MidChain: true, AllowUnchained: true}} {
			if _, err := audit.Verify(key, walkOf(evs), opt); err != nil {
				t.Fatalf("verify: %v", err)
			}
		}
		if _, err := readLines(export(t, evs)); len(evs) > 0 && err != nil {
			t.Fatalf("the events taken do not re-export to lines taken: %v", err)
		}
	})
}
