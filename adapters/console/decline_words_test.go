package console_test

import (
	"regexp"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestABatchsDeclineSaysWhichCallsAreNotMade: the console's decline on
// an approval said "…, without the call", on a batch of several calls
// too, some of which may be approved already and are made all the same.
// A batch's says what every decline of a batch says (core/card): the
// agent makes no call that was not approved. A single approval's and a
// question's are as they were.
func TestABatchsDeclineSaysWhichCallsAreNotMade(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	batch := e.batch()
	single := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Read it?", Tool: "read_file", Arguments: []byte(`{"path":"/tmp/a"}`)})
	plain := e.ask(core.AskInput{Text: "Which region?"})
	button := regexp.MustCompile(`<form method="post" action="/q/[^/"]+/decline" class="decline">(?s:.*?)<button type="submit" class="quiet">(.*?)</button>`)
	for _, c := range []struct {
		q    *core.Question
		want string
	}{
		{batch, card.LabelConsoleDecline + ", making no call that was not approved"},
		{single, card.LabelConsoleDecline + ", without the call"},
		{plain, card.LabelConsoleDecline},
	} {
		for _, path := range []string{"/q/" + string(c.q.ID), "/rows/" + string(c.q.ID)} {
			m := button.FindStringSubmatch(alice.get(path).body)
			if m == nil {
				t.Fatalf("%s: no decline button", path)
			}
			if m[1] != c.want {
				t.Errorf("%s (%d calls): the decline reads %q, want %q", path, len(c.q.Calls), m[1], c.want)
			}
		}
	}
}
