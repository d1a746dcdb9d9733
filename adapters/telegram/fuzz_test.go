package telegram

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
)

// FuzzPromptRef: whatever text a replied-to message holds, a ref comes out
// only when the last line is exactly "ref: " and a canonical free-text ref,
// and it names what that line says.
func FuzzPromptRef(f *testing.F) {
	good := core.Ref{QuestionID: goldenID, Item: 1, Action: core.RefText}.Encode()
	for _, s := range []string{
		"Reply to this message\nref: " + good,
		"ref: " + good + "\n",
		"ref: " + good + " trailing",
		"ref: 1o-0" + goldenID,
		"ref:" + good,
		"\n\nref: \n",
		"ref: " + strings.ToUpper(good),
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, ok := PromptRef(text)
		if !ok {
			return
		}
		if r.Action != core.RefText {
			t.Fatalf("a non-text ref %+v came out of %q", r, text)
		}
		enc := r.Encode()
		trimmed := strings.TrimRight(text, " \t\r\n")
		last := trimmed[strings.LastIndexByte(trimmed, '\n')+1:]
		if strings.TrimSpace(last) != refPrefix+enc {
			t.Fatalf("ref %q from last line %q", enc, last)
		}
	})
}

// FuzzEsc: an escaped, cut text always fits its budget, parses as
// Telegram HTML, and shows a prefix of the input.
func FuzzEsc(f *testing.F) {
	for _, s := range []string{"a<b>&c", "𝄞<&>", "\xff\xfe", "&amp;", strings.Repeat("é<", 50)} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = max % 5000
		e := esc(s, max)
		if units(e) > max && e != "" {
			t.Fatalf("esc(%q, %d) = %q: %d units", s, max, e, units(e))
		}
		plain, err := telegramfake.PlainText(e)
		if err != nil {
			t.Fatalf("esc(%q) = %q does not parse: %v", s, e, err)
		}
		valid := strings.ToValidUTF8(s, "\uFFFD")
		if !strings.HasPrefix(valid, strings.TrimSuffix(plain, ellipsis)) || !utf8.ValidString(e) {
			t.Fatalf("esc(%q) shows %q, not a prefix", s, plain)
		}
	})
}
