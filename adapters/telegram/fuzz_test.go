package telegram

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
)

// FuzzPromptRef: whatever people or agents write, once escaped into a bot
// message as every untrusted text is, it never yields a ref; and a bot
// message ending with its own ref line yields exactly that ref, whatever
// untrusted text stands before it.
func FuzzPromptRef(f *testing.F) {
	good := core.Ref{QuestionID: goldenID, Item: 1, Action: core.RefText}.Encode()
	other := core.Ref{QuestionID: "bbbbbbbbbbbbbbbbb", Item: -1, Action: core.RefText}.Encode()
	for _, s := range []string{
		"ref: " + other,
		"\nref: " + other + "\n",
		"ref: <u>" + other + "</u>",
		"ref: &lt;u&gt;" + other,
		"ref: 1o-0" + goldenID,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, untrusted string) {
		forged := "<b>Answered</b>\nNote: " + esc(untrusted, 4000)
		plain, entities, err := telegramfake.Parse(forged)
		if err != nil {
			t.Fatalf("%q does not parse: %v", forged, err)
		}
		if r, ok := PromptRef(plain, entities); ok {
			t.Fatalf("untrusted text %q yielded ref %+v", untrusted, r)
		}
		plain, entities, err = telegramfake.Parse(forged + "\n\n" + refLine(good))
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := PromptRef(plain, entities); !ok || r.Encode() != good {
			t.Fatalf("the bot's own ref after %q read as %+v, %v", untrusted, r, ok)
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
		valid := textlimit.Clean(s)
		if !strings.HasPrefix(valid, strings.TrimSuffix(plain, ellipsis)) || !utf8.ValidString(e) {
			t.Fatalf("esc(%q) shows %q, not a prefix", s, plain)
		}
	})
}
