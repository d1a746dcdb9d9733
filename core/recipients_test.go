package core_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestRecipientsByPersonFollowTheDirectory: a route's email and ntfy
// recipients named by person or group are looked up each time a card
// goes out, so a question asked before a reload is reminded at the
// person's address or topic as it is now, and no longer at all once they
// left the group. Before, the rooms were resolved once, when the file was
// read, and an open question kept them: a topic rotated because it had
// leaked (a topic is a password on ntfy) still got every reminder, and
// someone taken out of the group was still mailed the question.
func TestRecipientsByPersonFollowTheDirectory(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStore(t)
	conf := func(topic string, leads ...string) core.Config {
		return core.Config{ActorKey: []byte("k"),
			Routes: map[string]core.Route{"ops": {
				Rooms: []core.Room{
					{Surface: core.SurfaceNtfy, ID: "person:dave"},
					{Surface: core.SurfaceEmail, ID: "group:leads"},
					{Surface: core.SurfaceEmail, ID: "carol@example.com"}, // carol twice: one mail
				},
				People:      []string{"person:dave", "group:leads"},
				RemindEvery: time.Hour,
			}},
			People: map[string]core.Person{
				"dave":  {IDs: ids("ntfy", topic)},
				"carol": {IDs: ids("email", "carol@example.com")},
				"erin":  {IDs: ids("email", "erin@example.com")},
			},
			Groups: map[string]core.Group{"leads": {Members: leads}}}
	}
	svc, err := core.New(st, conf("dave-old-topic", "carol", "erin"), clock)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
		Reversibility: core.Reversible, Route: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	rooms := func() map[string]int {
		t.Helper()
		to := map[string]int{}
		for _, sf := range []core.Surface{core.SurfaceNtfy, core.SurfaceEmail} {
			ds, err := st.Claim(ctx, sf, "check", 100, time.Hour, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				to[string(d.Surface)+" "+d.Room]++
				if err := st.Ack(ctx, d.Surface, d.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		return to
	}
	if got, want := rooms(), map[string]int{"ntfy dave-old-topic": 1, "email carol@example.com": 1, "email erin@example.com": 1}; !maps.Equal(got, want) {
		t.Fatalf("the question went to %v, want %v", got, want)
	}

	// Dave's topic leaked and was rotated; erin left the group.
	if err := svc.Reconfigure(conf("dave-new-topic", "carol")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if n, err := svc.Remind(ctx); err != nil || n != 1 {
		t.Fatalf("Remind = %d, %v", n, err)
	}
	if got, want := rooms(), map[string]int{"ntfy dave-new-topic": 1, "email carol@example.com": 1}; !maps.Equal(got, want) {
		t.Fatalf("the reminder went to %v, want %v", got, want)
	}
	// A tap answers as the topic it was sent to: the old one is nobody's now.
	for topic, want := range map[string]bool{"dave-old-topic": false, "dave-new-topic": true} {
		if got := svc.MayAnswer(q, core.Decider{Surface: core.SurfaceNtfy, ID: topic}); got != want {
			t.Errorf("a tap as %s may answer: %v, want %v", topic, got, want)
		}
	}
}

// TestRecipientsByPersonAreChecked: a room that names a person or group
// is refused where it cannot be looked up: on a surface whose rooms are
// not one person's, for a person with no account there, or for nobody
// the configuration knows.
func TestRecipientsByPersonAreChecked(t *testing.T) {
	for _, c := range []struct {
		room core.Room
		want string
	}{
		{core.Room{Surface: core.SurfaceSlack, ID: "person:dave"}, "only email and ntfy"},
		{core.Room{Surface: core.SurfaceEmail, ID: "person:dave"}, `person "dave" has no email`},
		{core.Room{Surface: core.SurfaceNtfy, ID: "person:zed"}, `no person named "zed"`},
		{core.Room{Surface: core.SurfaceNtfy, ID: "group:nobody"}, `no group named "nobody"`},
	} {
		_, err := core.New(coretest.OpenStore(t), core.Config{ActorKey: []byte("k"),
			Routes: map[string]core.Route{"ops": {Rooms: []core.Room{c.room}, People: []string{"person:dave"}}},
			People: map[string]core.Person{"dave": {IDs: ids("ntfy", "dave-topic")}}}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("room %+v: %v, want an error saying %q", c.room, err, c.want)
		}
	}
	// The operator's view lists the rooms as they are looked up now.
	svc, err := core.New(coretest.OpenStore(t), core.Config{ActorKey: []byte("k"),
		Routes: map[string]core.Route{"ops": {Rooms: []core.Room{{Surface: core.SurfaceNtfy, ID: "person:dave"}}, People: []string{"person:dave"}}},
		People: map[string]core.Person{"dave": {IDs: ids("ntfy", "dave-topic")}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.Routes()[0].Posts(); !slices.Equal(got, []core.Room{{Surface: core.SurfaceNtfy, ID: "dave-topic"}}) {
		t.Fatalf("Posts() = %v", got)
	}
}
