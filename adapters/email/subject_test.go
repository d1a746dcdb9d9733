package email_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestASubjectShowsTheQuestionAsWritten: a question whose text holds
// what reads as an encoded word (RFC 2047) is shown in the subject as
// the agent wrote it, on one line, by a mail client (the fake decodes
// the subject as one does). Before, an ASCII subject went out as it
// was, so the client decoded the agent's "=?UTF-8?Q?...?=" into other
// words, with the line break inside it that the subject's one line
// (textlimit.OneLine) had ruled out; and a long subject with it, cut
// into several encoded words, still reads whole, each character intact.
func TestASubjectShowsTheQuestionAsWritten(t *testing.T) {
	const smuggled = "=?UTF-8?Q?Nothing_to_approve=0D=0AAll_clear?="
	e := newEnv(t)
	e.deliver()
	for n, text := range []string{
		"Rotate the key? " + smuggled,
		"Größe ändern? " + smuggled + " " + strings.Repeat("ü€😀", 10),
	} {
		e.ask(core.AskInput{Kind: core.KindClarification, Text: text})
		m := e.mail(alice, n+1)
		head, _, _ := strings.Cut(text, " =?")
		if !strings.Contains(m.Subject, head+" "+smuggled) || strings.ContainsAny(m.Subject, "\r\n") {
			t.Errorf("the question %q is shown with the subject %q", text, m.Subject)
		}
		if tail := strings.Repeat("ü€😀", 10); n == 1 && !strings.HasSuffix(m.Subject, tail) {
			t.Errorf("a long subject lost characters: %q", m.Subject)
		}
	}
}
