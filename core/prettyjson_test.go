package core_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// stored is raw as a store keeps it: encoding/json, which escapes &, <
// and > in a json.RawMessage, writes the record.
func stored(t testing.TB, raw string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(struct {
		A json.RawMessage `json:"a"`
	}{json.RawMessage(raw)})
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		A json.RawMessage `json:"a"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back.A
}

func TestPrettyJSON(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"shell text", `{"cmd":"make test && ./deploy.sh > deploy.log"}`,
			"{\n  \"cmd\": \"make test && ./deploy.sh > deploy.log\"\n}"},
		{"markup, quotes and non-ASCII", `{"html":"<b>\"Zoë — 東京\"</b>"}`,
			"{\n  \"html\": \"<b>\\\"Zoë — 東京\\\"</b>\"\n}"},
		{"key order and number text as written", `{"z":1.50,"a":[1e3,-0.0],"m":{"y":true,"b":null}}`,
			"{\n  \"z\": 1.50,\n  \"a\": [\n    1e3,\n    -0.0\n  ],\n  \"m\": {\n    \"y\": true,\n    \"b\": null\n  }\n}"},
		// The seven characters \\u0026 are an escaped backslash and the
		// text u0026, not an ampersand.
		{"an escaped backslash before u0026", `{"lit":"\\u0026 \\\u003c"}`,
			"{\n  \"lit\": \"\\\\u0026 \\\\<\"\n}"},
		{"escapes written by hand, either case", `{"a":"\u0026\u003C\u003e \u0041 \n"}`,
			"{\n  \"a\": \"&<> \\u0041 \\n\"\n}"},
		{"line separators stay visible", "{\"a\":\"x\u2028y\"}",
			"{\n  \"a\": \"x\\u2028y\"\n}"},
		{"& < > in a key", `{"a&b<c>":1}`, "{\n  \"a&b<c>\": 1\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := core.PrettyJSON(stored(t, tt.raw)); got != tt.want {
				t.Errorf("PrettyJSON(%s)\n got %s\nwant %s", tt.raw, got, tt.want)
			}
		})
	}
	if got := core.PrettyJSON(json.RawMessage(`{"a":`)); got != `{"a":` {
		t.Errorf("text that is not JSON: %q, want it as it is", got)
	}
}

// FuzzPrettyJSONString: whatever a string holds, stored and shown it
// reads as encoding/json writes it with HTML escaping off.
func FuzzPrettyJSONString(f *testing.F) {
	for _, s := range []string{"make test && ./deploy.sh > deploy.log", `\u0026`, `\\u003c`, "\"<&>\"", "Zoë — 東京", "\u2028\u2029", "\\", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := core.PrettyJSON(raw); got != strings.TrimSuffix(want.String(), "\n") {
			t.Fatalf("PrettyJSON(%s) = %s, want %s", raw, got, want.String())
		}
	})
}

// FuzzPrettyJSON: what people are shown is the same JSON value as the
// arguments, keys in the same order.
func FuzzPrettyJSON(f *testing.F) {
	for _, s := range []string{`{"cmd":"a && b > c"}`, `{"lit":"\\u0026"}`, `[1.50,"\u003c",{"b":1,"a":2}]`, `"\"\\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		got := core.PrettyJSON(json.RawMessage(raw))
		if !json.Valid([]byte(got)) {
			t.Fatalf("PrettyJSON(%s) = %s: not JSON", raw, got)
		}
		if a, b := tokens(t, raw), tokens(t, got); !reflect.DeepEqual(a, b) {
			t.Fatalf("PrettyJSON(%s) = %s: tokens %v, want %v", raw, got, b, a)
		}
	})
}

// tokens is raw's JSON tokens in order, numbers as written.
func tokens(t *testing.T, raw string) []any {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var out []any
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		out = append(out, tok)
	}
}

// TestPrettyJSONShowsInvisibleCharacters: a character that renders as
// nothing (a bidi override, a zero-width space, the tag block that can
// spell a hidden instruction) is shown in a string as its JSON escape,
// which means the same arguments, so an approver sees what is there;
// before, "invoice\u202efdp.exe" read as "invoiceexe.pdf" on every card,
// and tag characters after "Summarise README.md" read as nothing.
func TestPrettyJSONShowsInvisibleCharacters(t *testing.T) {
	for raw, want := range map[string]string{
		`{"file":"invoice` + "\u202e" + `fdp.exe"}`:                      `"invoice\u202efdp.exe"`,
		`{"prompt":"Summarise README.md` + "\U000E0061\U000E0062" + `"}`: `"Summarise README.md\udb40\udc61\udb40\udc62"`,
		`{"cmd":"ls` + "\u200b" + ` -la"}`:                               `"ls\u200b -la"`,
		`{"name":"café ✓ 日本"}`:                                           `"café ✓ 日本"`,
	} {
		got := core.PrettyJSON(json.RawMessage(raw))
		if !strings.Contains(got, want) {
			t.Errorf("PrettyJSON(%q) = %s; want it to hold %s", raw, got, want)
		}
		var a, b any
		if json.Unmarshal([]byte(raw), &a) != nil || json.Unmarshal([]byte(got), &b) != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("PrettyJSON(%q) = %s: not the same arguments", raw, got)
		}
	}
}

// TestVisibleNamesShowInvisibleCharacters: a tool name with characters
// that render as nothing shows them, so "Bash" with a zero-width space
// does not pass for Bash.
func TestVisibleNamesShowInvisibleCharacters(t *testing.T) {
	if got := core.Visible("Ba\u200bsh"); got != `Ba\u200bsh` {
		t.Errorf("Visible = %q", got)
	}
	if got := core.Visible("write_file"); got != "write_file" {
		t.Errorf("Visible changed a plain name: %q", got)
	}
}
