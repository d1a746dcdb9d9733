package email

import (
	"bytes"
	"encoding/base64"
	"mime"
	"net/mail"
	"strings"
	"testing"
	"unicode/utf8"

	gomail "github.com/wneessen/go-mail"
)

// TestAnEncodedSubjectKeepsRFC2047sLimits: each word subjectHeader
// writes is at most 75 characters and holds whole characters (RFC 2047,
// 2 and 5), and go-mail folds the subject between them into lines of at
// most 78 (RFC 5322, 2.1.1) that a reader decodes back to the text.
func TestAnEncodedSubjectKeepsRFC2047sLimits(t *testing.T) {
	for _, s := range []string{
		"Question: x=?",
		"Question: " + strings.Repeat("=?ab?", 30),
		"HARD TO REVERSE: Frage: =?UTF-8?B?SGk=?= " + strings.Repeat("ü€😀", 20),
	} {
		h := subjectHeader(s)
		for w := range strings.FieldsSeq(h) {
			inner, ok := strings.CutPrefix(w, "=?UTF-8?b?")
			inner, ok2 := strings.CutSuffix(inner, "?=")
			raw, err := base64.StdEncoding.DecodeString(inner)
			if !ok || !ok2 || err != nil || len(w) > 75 || !utf8.Valid(raw) {
				t.Errorf("%q: the word %q (%d characters) is not a whole encoded word", s, w, len(w))
			}
		}
		m := gomail.NewMsg()
		m.Subject(h)
		var b bytes.Buffer
		if _, err := m.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		lines, found := strings.Split(b.String(), "\r\n"), false
		for i := range lines {
			if !strings.HasPrefix(lines[i], "Subject:") {
				continue
			}
			// The subject's lines: its first, and those folded after it.
			found = true
			for _, l := range lines[i : i+1+folded(lines[i+1:])] {
				if len(l) > 78 {
					t.Errorf("%q: a line of %d characters: %q", s, len(l), l)
				}
			}
		}
		if !found {
			t.Fatalf("no subject in:\n%s", b.String())
		}
		msg, err := mail.ReadMessage(&b)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil || got != s {
			t.Errorf("%q is read back as %q (%v)", s, got, err)
		}
	}
}

// folded is how many of lines, from the first, continue the header
// before them.
func folded(lines []string) int {
	for i, l := range lines {
		if !strings.HasPrefix(l, " ") {
			return i
		}
	}
	return len(lines)
}
