package ntfyfake_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/ntfy/ntfyfake"
)

// TestDocumentedPublishes: the fake takes each documented example as it
// stands, so what it refuses, ntfy's documentation does not allow.
func TestDocumentedPublishes(t *testing.T) {
	for _, name := range []string{"publish_json.json", "publish_actions.json", "publish_http.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		p, err := ntfyfake.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Topic == "" || p.Message == "" || len(p.Actions) == 0 {
			t.Fatalf("%s decoded as %+v", name, p)
		}
	}
	raw, _ := os.ReadFile(filepath.Join("testdata", "publish_http.json"))
	p, _ := ntfyfake.Decode(bytes.NewReader(raw))
	if a := p.Actions[0]; a.Method != "PUT" || a.Headers["Authorization"] == "" || !strings.Contains(a.Body, "close") {
		t.Fatalf("the http action decoded as %+v", a)
	}
}

func TestRefusesWhatNtfyRefuses(t *testing.T) {
	for name, body := range map[string]string{
		"no topic":      `{"message":"x"}`,
		"bad topic":     `{"topic":"a/b"}`,
		"unknown field": `{"topic":"t","colour":"red"}`,
		"four actions":  `{"topic":"t","actions":[{"action":"view","label":"1","url":"u"},{"action":"view","label":"2","url":"u"},{"action":"view","label":"3","url":"u"},{"action":"view","label":"4","url":"u"}]}`,
		"no url":        `{"topic":"t","actions":[{"action":"http","label":"go"}]}`,
		"bad action":    `{"topic":"t","actions":[{"action":"run","label":"go","url":"u"}]}`,
		"bad priority":  `{"topic":"t","priority":9}`,
	} {
		if _, err := ntfyfake.Decode(strings.NewReader(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestRefusesABodyAsLargeAsNtfyReads: ntfy reads a JSON publish up to
// MaxJSONBody bytes and refuses one that reaches it with 413, even when
// its message is within MaxMessage (escaped characters take more room in
// JSON than in the message); one just under it (two bytes, as its
// escaped quotes come in pairs) is published.
func TestRefusesABodyAsLargeAsNtfyReads(t *testing.T) {
	f := ntfyfake.Start(t, "")
	publish := func(size int) int {
		head := `{"topic":"t","message":"`
		body := head + strings.Repeat(`\"`, (size-len(head)-2)/2) + `"}`
		if len(body) != size {
			t.Fatalf("a body of %d bytes, want %d", len(body), size)
		}
		res, err := http.Post(f.URL+"/", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if st := publish(ntfyfake.MaxJSONBody - 2); st != http.StatusOK {
		t.Errorf("a body just under the limit: %d, want 200", st)
	}
	if st := publish(ntfyfake.MaxJSONBody); st != http.StatusRequestEntityTooLarge {
		t.Errorf("a body of the limit: %d, want 413", st)
	}
	if n := len(f.Messages("t")); n != 1 {
		t.Fatalf("%d messages published, want 1", n)
	}
}
