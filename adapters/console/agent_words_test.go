package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestTheConsoleLabelsAnAgentsOptionsAsEveryCardDoes: the console draws
// its own buttons and choices for an agent's options, beside its own
// controls. Before, it drew an agent's title as written, so an option
// titled "Decline to answer" read as the console's decline (and was
// recorded as the agent's option, resuming it with the option's
// write-up), and one with U+2028 in it broke the button's line. It now
// labels them as every chat card does (card.AgentLabel): quoted where
// they read as askbridge's own, on one line.
func TestTheConsoleLabelsAnAgentsOptionsAsEveryCardDoes(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	dec := e.ask(core.AskInput{Kind: core.KindDecision, Text: "Which way?", Options: []core.Option{
		{ID: "a", Title: "Decline to answer", Writeup: "the agent's a", Recommended: true},
		{ID: "b", Title: "Decline: let the agent decide", Writeup: "the agent's b"},
		{ID: "c", Title: "Ship\u2028it", Writeup: "the agent's c"}}})
	form := e.ask(core.AskInput{Kind: core.KindForm, Text: "Go?", Items: []core.FormItem{{ID: "go", Question: "Go ahead?",
		Options: []core.FormOption{{ID: "else", Label: "Something else"}, {ID: "yes", Label: "Yes\u2029please"}}}}})

	buttons := regexp.MustCompile(`(?s)<button type="submit" name="option" value="([a-z]+)"[^>]*>\s*<strong>(.*?)</strong>`)
	choices := regexp.MustCompile(`<input type="radio" name="item_option\.go" value="([a-z]+)"> (.*?)(?: <span|</label>)`)
	for _, c := range []struct {
		q    *core.Question
		find *regexp.Regexp
		want map[string]string
	}{
		{dec, buttons, map[string]string{"a": "“Decline to answer”", "b": "“Decline: let the agent decide”", "c": "Ship it"}},
		{form, choices, map[string]string{"else": "“Something else”", "yes": "Yes please"}},
	} {
		for _, path := range []string{"/q/" + string(c.q.ID), "/rows/" + string(c.q.ID)} {
			body := alice.get(path).body
			got := map[string]string{}
			for _, m := range c.find.FindAllStringSubmatch(body, -1) {
				got[m[1]] = m[2]
			}
			for id, want := range c.want {
				if got[id] != want {
					t.Errorf("%s: option %s is labelled %q, want %q", path, id, got[id], want)
				}
			}
			if c.q == dec && !strings.Contains(body, card.LabelConsoleDecline+"</button>") {
				t.Errorf("%s: the console's decline is not worded as card.LabelConsoleDecline, which labels are told apart from", path)
			}
		}
	}
}

// evilName is a display name as a Telegram or Slack user may set it: a
// right-to-left override and an isolate that would reorder the server's
// words after it, a line break and a line separator, a zero-width space.
const evilName = "Eve\u202e\u2066 \nApproved by\u2028Alice\u2069\u200b"

// TestAPersonsNameIsCleanedOnTheConsolesLines: the console draws core's
// lines that name people (the outcome line, the history's "who or what
// closed it", a quorum's tally) with each name isolated. Those lines now
// name a person as cleaned (card.PersonName), so the console looks for
// the cleaned name: before, the line held the name as typed, its
// override and line breaks among the server's words; found by the raw
// name, a cleaned one would not be isolated at all.
func TestAPersonsNameIsCleanedOnTheConsolesLines(t *testing.T) {
	routes := openRoutes()
	routes["duo"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, Quorum: 2}
	e := newEnv(t, routes)
	alice := e.signedIn(opAlice)
	eve := core.Decider{Surface: core.SurfaceAPI, ID: "eve", Name: evilName}
	const shown = "<bdi>Eve Approved by Alice</bdi>"

	q := e.ask(core.AskInput{Text: "Which region?"})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: eve, Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	vote := e.ask(core.AskInput{Kind: core.KindApproval, Route: "duo", Text: "Restart?", Tool: "shell", Arguments: []byte(`{"cmd":"restart"}`)})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: vote.ID, Decider: eve, OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	late := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"text": {"us"}}, "X-Askbridge-Fetch", "row")
	for what, c := range map[string]struct{ body, want string }{
		"the question's outcome line": {alice.get("/q/" + string(q.ID)).body, "Answered by " + shown + " on "},
		"a late answer's refusal":     {late.body, "Already closed. Answered by " + shown + " on "},
		"the history":                 {alice.get("/closed").body, "Answered by " + shown + " on "},
		"the quorum's row":            {alice.get("/rows/" + string(vote.ID)).body, "<bdi>1 of 2 approvals: Eve Approved by Alice</bdi>"},
		"the quorum's page":           {alice.get("/q/" + string(vote.ID)).body, "<bdi>1 of 2 approvals: Eve Approved by Alice</bdi>"},
		"the people page":             {alice.get("/people").body, "<bdi>1 of 2 approvals: Eve Approved by Alice</bdi>"},
	} {
		if !strings.Contains(c.body, c.want) {
			t.Errorf("%s does not hold %q", what, c.want)
		}
		if strings.ContainsAny(c.body, "\u202e\u2066\u2069\u2028\u200b") {
			t.Errorf("%s holds the name as typed", what)
		}
	}
}

// TestAQuestionsFirstLineEndsAtEveryLineBreak: a folded row, the history
// and the People page show a question by its first line. Before, that
// line ended at "\n" alone, so a question whose lines the agent parted
// with U+2028 (or U+2029, or a lone "\r") showed them all in the place of
// one line, and the browser broke it there all the same.
func TestAQuestionsFirstLineEndsAtEveryLineBreak(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	for _, sep := range []string{"\u2028", "\u2029", "\r"} {
		q := e.ask(core.AskInput{Text: "Deploy now?" + sep + "Then approve every later ask"})
		row := regexp.MustCompile(`<span class="row-text">(.*?)</span>`).FindStringSubmatch(alice.get("/rows/" + string(q.ID)).body)
		if row == nil || row[1] != "Deploy now?" {
			t.Errorf("%q: the folded row shows %q", sep, row)
		}
		if r := alice.get("/people"); r.status != http.StatusOK || !strings.Contains(r.body, ">Deploy now?</a>") {
			t.Errorf("%q: the People page does not show the question by its first line", sep)
		}
		if _, err := e.svc.Cancel(t.Context(), core.CancelInput{QuestionID: q.ID, By: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}}); err != nil {
			t.Fatal(err)
		}
		if body := alice.get("/closed").body; !strings.Contains(body, `<a href="/q/`+string(q.ID)+`">Deploy now?</a>`) {
			t.Errorf("%q: the history does not show the question by its first line", sep)
		}
	}
}
