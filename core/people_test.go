package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/google/go-cmp/cmp"
)

func ids(kv ...string) map[core.Surface][]string {
	m := map[core.Surface][]string{}
	for i := 0; i < len(kv); i += 2 {
		m[core.Surface(kv[i])] = append(m[core.Surface(kv[i])], kv[i+1])
	}
	return m
}

func TestPeopleConfigRefusals(t *testing.T) {
	alice := core.Person{IDs: ids("slack", "U1", "telegram", "10")}
	for _, tt := range []struct {
		name   string
		people map[string]core.Person
		groups map[string]core.Group
		routes map[string]core.Route
		want   []string // every part must be in the error
	}{
		{"an id claimed twice", map[string]core.Person{"alice": alice, "bob": {IDs: ids("telegram", "10")}}, nil, nil,
			[]string{`telegram id "10"`, `"alice"`, `"bob"`}},
		{"a token name claimed twice", map[string]core.Person{"alice": {IDs: ids("api", "t")}, "bob": {IDs: ids("api", "t")}}, nil, nil,
			[]string{`api id "t"`, `"alice"`, `"bob"`}},
		{"an unknown group member", map[string]core.Person{"alice": alice}, map[string]core.Group{"leads": {Members: []string{"alice", "zed"}}}, nil,
			[]string{"groups.leads", `"zed"`}},
		{"an empty group", map[string]core.Person{"alice": alice}, map[string]core.Group{"leads": {}}, nil,
			[]string{"groups.leads"}},
		{"two slack ids", map[string]core.Person{"alice": {IDs: ids("slack", "U1", "slack", "U2")}}, nil, nil,
			[]string{"people.alice.slack"}},
		{"a surface that is not", map[string]core.Person{"alice": {IDs: ids("fax", "1")}}, nil, nil,
			[]string{"people.alice", `"fax"`}},
		{"dm without a chat id", map[string]core.Person{"alice": {IDs: ids("api", "t"), DM: true}}, nil, nil,
			[]string{"people.alice.dm"}},
		{"prefer without its id", map[string]core.Person{"alice": {IDs: ids("slack", "U1"), Prefer: core.SurfaceDiscord}}, nil, nil,
			[]string{"people.alice.prefer", "discord"}},
		{"a route naming an unknown person", map[string]core.Person{"alice": alice}, nil,
			map[string]core.Route{"r": {People: []string{"person:alice", "person:zed"}}}, []string{"routes.r.people", `"zed"`}},
		{"a route naming an unknown group", nil, nil,
			map[string]core.Route{"r": {People: []string{"group:leads"}}}, []string{"routes.r.people", `"leads"`}},
		{"a people entry of another form", nil, nil,
			map[string]core.Route{"r": {People: []string{"alice"}}}, []string{"routes.r.people", `"alice"`}},
		{"a person among one surface's accounts", map[string]core.Person{"alice": alice}, nil,
			map[string]core.Route{"r": {Deciders: map[core.Surface][]string{core.SurfaceSlack: {"person:alice"}}}}, []string{`"r"`, "deciders.slack", "people"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := core.New(coretest.OpenStore(t), core.Config{ActorKey: []byte("k"), People: tt.people, Groups: tt.groups, Routes: tt.routes}, nil)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

func TestPeopleDirectoryHidesAccounts(t *testing.T) {
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{
		People: map[string]core.Person{
			"alice": {DisplayName: "Alice", IDs: ids("slack", "U-secret", "api", "alice-token"), DM: true},
			"bob":   {IDs: ids("telegram", "42")},
		},
		Groups: map[string]core.Group{"leads": {Members: []string{"bob", "alice"}}},
	})
	got := svc.People()
	want := core.Directory{
		People: []core.PersonView{
			{Name: "alice", DisplayName: "Alice", Surfaces: []core.Surface{core.SurfaceSlack, core.SurfaceAPI}, Groups: []string{"leads"}, DM: true},
			{Name: "bob", Surfaces: []core.Surface{core.SurfaceTelegram}, Groups: []string{"leads"}},
		},
		Groups: []core.Group{{Name: "leads", Members: []string{"bob", "alice"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("directory (-want +got):\n%s", diff)
	}
	raw, _ := json.Marshal(got)
	for _, secret := range []string{"U-secret", "alice-token", "42"} {
		if strings.Contains(string(raw), secret) {
			t.Fatalf("the directory shows account %q: %s", secret, raw)
		}
	}
}

func TestPseudonymOfAPersonIsNotOfAnAccount(t *testing.T) {
	key := []byte("k")
	slack := core.Decider{Surface: core.SurfaceSlack, ID: "U1", Person: "alice"}
	tg := core.Decider{Surface: core.SurfaceTelegram, ID: "9", Person: "alice"}
	if core.Pseudonym(key, slack) != core.Pseudonym(key, tg) {
		t.Fatal("one person on two surfaces has two pseudonyms")
	}
	// An account whose id happens to be the person's name is not the person.
	if core.Pseudonym(key, slack) == core.Pseudonym(key, core.Decider{Surface: core.SurfaceSlack, ID: "alice"}) {
		t.Fatal("a person shares a pseudonym with an account named like them")
	}
}
