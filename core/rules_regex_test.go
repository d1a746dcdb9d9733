package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestARegexThatCannotCompileIsRefusedAtLoad: a regular expression
// written in a condition that RE2 cannot compile (a PCRE lookahead, a
// backreference) stops the configuration loading, with its position, as
// any condition that does not compile does. Before, it loaded, and the
// rule failed at every ask: a deny written with one never denied, and no
// allow after it ever applied, while the file looked accepted.
func TestARegexThatCannotCompileIsRefusedAtLoad(t *testing.T) {
	for _, c := range []struct{ name, when, want string }{
		{"a lookahead", `tool == "Bash" && args.command.matches("git push (?!origin)")`,
			"routes.guarded.rules[1].when: line 1, column 40: error parsing regexp: invalid or unsupported Perl syntax: `(?!`"},
		{"a backreference, called as a function, on line 2", "tool == \"Bash\" &&\n  matches(args.command, \"(a)\\\\1\")",
			"routes.guarded.rules[1].when: line 2, column 25: error parsing regexp: invalid escape sequence: `\\1`"},
	} {
		t.Run(c.name, func(t *testing.T) {
			routes := coretest.APIRoutes()
			routes["guarded"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
				Rules: []core.Rule{{When: `tool == "read_file"`, Decide: core.DecideAllow}, {When: c.when, Decide: core.DecideDeny}}}
			_, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v\nwant an error containing %q", err, c.want)
			}
		})
	}

	// A pattern that compiles, and one the arguments give (known only at
	// the ask), load; the first still matches as written.
	routes := coretest.APIRoutes()
	routes["guarded"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, Rules: []core.Rule{
		{Name: "push", When: `tool == "Bash" && args.command.matches("^git push\\b")`, Decide: core.DecideDeny},
		{Name: "theirs", When: `tool == "grep" && args.text.matches(args.pattern)`, Decide: core.DecideAllow},
	}}
	svc, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{"command":"git push --force"}`: `policy rule 0 of route "guarded" ("push") denies it at once, nobody is asked`,
		`{"command":"git status"}`:       `no rule matches: asked as configured`,
	} {
		v, err := svc.Evaluate(core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Route: "guarded", Text: "Run?",
			Reversibility: core.Reversible, Tool: "Bash", Arguments: json.RawMessage(args)})
		if err != nil || v.Explain() != want {
			t.Errorf("%s: %q, %v\nwant %q", args, v.Explain(), err, want)
		}
	}
}
