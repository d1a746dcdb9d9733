package ntfy_test

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

// A reminder is not published to a topic that has already acted on the
// question: one that voted, or, on a form, answered one of its items.
// Another topic's reminder still goes.
func TestReminderSkipsATopicThatActed(t *testing.T) {
	e := newEnv(t, token)
	q := e.ask(core.AskInput{Kind: core.KindForm, Text: "Release plan", Reversibility: core.Reversible, Items: []core.FormItem{
		{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}},
		{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
	}})
	answered := *q
	answered.Answers = []core.ItemAnswer{{ItemID: "day", OptionID: "mon", Decider: core.Decider{Surface: core.SurfaceNtfy, ID: topic}}}
	voted := *q
	voted.Votes = []core.Vote{{Key: "v1", Decider: core.Decider{Surface: core.SurfaceNtfy, ID: topic}}}
	for name, acted := range map[string]*core.Question{"answered an item": &answered, "voted": &voted} {
		if err := e.a.Remind(t.Context(), acted, topic); err != nil {
			t.Fatal(err)
		}
		if ms := e.fake.Messages(topic); len(ms) != 0 {
			t.Fatalf("a topic that %s was reminded: %+v", name, ms)
		}
	}
	if err := e.a.Remind(t.Context(), &answered, "other-topic"); err != nil {
		t.Fatal(err)
	}
	if ms := e.fake.Messages("other-topic"); len(ms) != 1 {
		t.Fatalf("the topic that did not act got %d reminders, want 1", len(ms))
	}
}

// A topic that is a configured person's is not reminded once that
// person acted from another surface: reminders skip who acted, whoever
// they acted as.
func TestReminderSkipsAPersonWhoActedElsewhere(t *testing.T) {
	e := newEnvPeople(t, token, map[string]core.Person{"carol": {Name: "carol",
		IDs: map[core.Surface][]string{core.SurfaceNtfy: {topic}, core.SurfaceAPI: {"carol-token"}}}})
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	voted := *q
	voted.Votes = []core.Vote{{Key: "v1", Decider: core.Decider{Surface: core.SurfaceAPI, ID: "carol-token", Person: "carol"}}}
	if err := e.a.Remind(t.Context(), &voted, topic); err != nil {
		t.Fatal(err)
	}
	if ms := e.fake.Messages(topic); len(ms) != 0 {
		t.Fatalf("carol voted through the API, yet her topic was reminded: %+v", ms)
	}
}
