package email_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestAClarificationMailDoesNotInviteAReply: nothing reads replies to
// askbridge's mail, so a clarification's link is not labelled "Reply to
// answer" (as on the chat surfaces, which read thread replies), and the
// footer says replies are not read. Before, a person who did as the
// label said lost their answer, and the question timed out.
func TestAClarificationMailDoesNotInviteAReply(t *testing.T) {
	e := newEnv(t)
	e.deliver()
	e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	m := e.mail(alice, 1)
	for part, body := range map[string]string{"text": m.Text, "HTML": m.HTML} {
		if strings.Contains(body, card.LabelAnswer) {
			t.Errorf("the %s part says %q", part, card.LabelAnswer)
		}
		if !strings.Contains(body, card.LabelAnswerOnPage) || !strings.Contains(body, "Replies to it are not read") {
			t.Errorf("the %s part lacks the link's label or the footer's word on replies:\n%s", part, body)
		}
	}
	if _, body := do(t, http.MethodGet, link(t, m, card.LabelAnswerOnPage), nil); !strings.Contains(body, "<textarea") {
		t.Fatalf("the link does not open a page to answer on:\n%s", body)
	}
}
