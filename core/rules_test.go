package core_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestRulesCheckedAtLoad: a rule that cannot be used stops core from
// starting, with an error naming the route, the rule's index and field,
// and for a condition the position of the error in it.
func TestRulesCheckedAtLoad(t *testing.T) {
	cases := []struct {
		name string
		rule core.Rule
		want string
	}{
		{"does not compile", core.Rule{When: `tool == "Bash" &&`},
			`routes.guarded.rules[1].when: line 1, column 18: `},
		{"an unknown variable", core.Rule{When: `tol == "Bash"`},
			`routes.guarded.rules[1].when: line 1, column 1: undeclared reference to 'tol'`},
		{"not a bool", core.Rule{When: `tool + "x"`},
			`routes.guarded.rules[1].when: the condition returns string; it must return bool`},
		{"no condition", core.Rule{When: " ", Decide: core.DecideAllow},
			`routes.guarded.rules[1].when: a condition is required`},
		{"an unknown decision", core.Rule{When: "true", Decide: "maybe"},
			`routes.guarded.rules[1].decide: "maybe" is not allow, deny or ask`},
		{"allow with a route", core.Rule{When: "true", Decide: core.DecideAllow, Route: "default"},
			`routes.guarded.rules[1].decide: allow closes the question at once`},
		{"an unknown route", core.Rule{When: "true", Route: "nowhere"},
			`routes.guarded.rules[1].route: no route named "nowhere"`},
		{"a bad reversibility", core.Rule{When: "true", Reversibility: "easy"},
			`routes.guarded.rules[1].reversibility: "easy" is not reversible or hard_to_reverse`},
		{"a timeout past the limit", core.Rule{When: "true", Timeout: 365 * 24 * time.Hour},
			`routes.guarded.rules[1].timeout: 8760h0m0s is longer than the max timeout, 720h0m0s`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			routes := coretest.APIRoutes()
			routes["guarded"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
				Rules: []core.Rule{{When: `tool == "read_file"`, Decide: core.DecideAllow}, c.rule}}
			_, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v; want an error containing %q", err, c.want)
			}
		})
	}
}

// TestEvaluateExplains: what askbridge policy test prints for each kind
// of verdict.
func TestEvaluateExplains(t *testing.T) {
	routes := coretest.APIRoutes()
	routes["guarded"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, MaxQuorum: 2, Rules: []core.Rule{
		{Name: "reads", When: `tool == "read_file"`, Decide: core.DecideAllow},
		{When: `tool == "fetch"`, Decide: core.DecideDeny, Reason: "No network."},
		{When: `tool == "shell" && args.command.contains("rm")`, Reversibility: core.HardToReverse, Quorum: 2},
		{When: `args.mode == "x"`, Decide: core.DecideAllow},
	}}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: routes})
	ask := func(tool, args string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Route: "guarded", Text: "ok?",
			Reversibility: core.Reversible, Tool: tool, Arguments: []byte(args)}
	}
	for _, c := range []struct {
		in   core.AskInput
		want string
	}{
		{ask("read_file", `{}`), `policy rule 0 of route "guarded" ("reads") allows it: approved at once, nobody is asked`},
		{ask("fetch", `{}`), `policy rule 1 of route "guarded" denies it at once, nobody is asked: No network.`},
		{ask("shell", `{"command":"rm -rf /"}`), `policy rule 2 of route "guarded" matched: asked with reversibility hard_to_reverse, quorum 2`},
		{ask("other", `{"mode":"y"}`), `no rule matches: asked as configured`},
		{ask("other", `{}`), `a rule could not be evaluated, so the rules stopped and the ask is asked as configured: routes.guarded.rules[3].when: no such key: mode`},
		{core.AskInput{Kind: core.KindClarification, Route: "guarded"}, `no rule matches: asked as configured`},
	} {
		v, err := svc.Evaluate(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in.Tool, err)
		}
		if got := v.Explain(); got != c.want {
			t.Errorf("%s %s: %q\nwant %q", c.in.Tool, c.in.Arguments, got, c.want)
		}
	}
}

// TestEveryCallCovered: a host may be told to stop asking about a tool
// only when the route's rules leave every call of it, whatever its
// arguments, to a standing approval or allow it; a rule that may ask one
// call as hard to reverse, deny it or send it elsewhere says no.
func TestEveryCallCovered(t *testing.T) {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	routes := coretest.APIRoutes()
	routes["other"] = core.Route{Deciders: api}
	routes["hooks"] = core.Route{Deciders: api, MaxQuorum: 2, Rules: []core.Rule{
		{When: `tool == "Read"`, Decide: core.DecideAllow},
		{When: `tool == "Bash" && args.command.matches("rm -rf|git push --force")`, Reversibility: core.HardToReverse, Quorum: 2},
		{When: `tool == "Bash"`, Reversibility: core.Reversible},
		{When: `tool == "WebFetch" && args.url.startsWith("https://docs.")`, Decide: core.DecideAllow},
		{When: `tool == "WebFetch"`, Decide: core.DecideDeny},
		{When: `tool == "Edit" && labels.project == "infra"`, Route: "other", Reversibility: core.Reversible},
		{When: `tool == "Edit" || tool == "Write"`, Reversibility: core.Reversible},
		{When: `tool == "Grep" && args.pattern != ""`, Reversibility: core.Reversible},
		{When: `tool == "Task" && run.startsWith("ci-")`, Decide: core.DecideDeny},
		{When: `tool == "Task"`, Reversibility: core.Reversible},
		{When: `tool == "Glob" && args.size() > 0`, Decide: core.DecideAllow},
		{When: `tool == "Draft" && args.draft`, Decide: core.DecideAllow},
		{When: `tool == "Draft"`, Reversibility: core.Reversible},
	}}
	svc, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool  string
		run   core.RunID
		asked core.Reversibility
		want  bool
	}{
		{"Read", "s1", core.HardToReverse, true},       // allowed outright
		{"Bash", "s1", core.HardToReverse, false},      // a rm -rf may be asked as hard to reverse
		{"WebFetch", "s1", core.HardToReverse, false},  // some fetches are denied
		{"Edit", "s1", core.HardToReverse, false},      // some edits go to another route
		{"Write", "s1", core.HardToReverse, true},      // every write asked as reversible
		{"Grep", "s1", core.HardToReverse, false},      // an empty pattern falls through to the asker's hard_to_reverse
		{"Grep", "s1", core.Reversible, false},         // a call without a pattern stops the rules there: a person is asked
		{"Draft", "s1", core.Reversible, false},        // the allow errs on a call without draft, and a person is asked
		{"Task", "ci-7", core.HardToReverse, false},    // denied in this run
		{"Task", "s1", core.HardToReverse, true},       // the deny cannot match this run
		{"Glob", "s1", core.HardToReverse, false},      // some globs reach the asker's default
		{"Unmatched", "s1", core.Reversible, true},     // no rule: asked as the asker says
		{"Unmatched", "s1", core.HardToReverse, false}, // ... hard to reverse
	} {
		in := core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: c.run, Route: "hooks", Tool: c.tool, Reversibility: c.asked}
		if got := svc.EveryCallCovered(in); got != c.want {
			t.Errorf("%s in run %s asked %s: covered %v, want %v", c.tool, c.run, c.asked, got, c.want)
		}
	}
	// One call, its arguments known (CallCovered): what the rules do
	// with exactly it.
	for _, c := range []struct {
		tool, args string
		want       bool
	}{
		{"Bash", `{"command":"ls"}`, true},                      // asked as reversible
		{"Bash", `{"command":"git push --force"}`, false},       // asked as hard to reverse, of two people
		{"Grep", `{"pattern":"x"}`, true},                       // asked as reversible
		{"Grep", `{}`, false},                                   // the rule stops on the missing key: a person is asked
		{"WebFetch", `{"url":"https://docs.example/a"}`, true},  // allowed
		{"WebFetch", `{"url":"https://evil.example/a"}`, false}, // denied
		{"Unmatched", `{}`, false},                              // asked as the asker says: hard to reverse
		{"Edit", `{"path":"/a"}`, false},                        // in project infra it goes to another route
		{"Write", `{"path":"/a"}`, true},                        // asked as reversible in every project
	} {
		// Asked from a project whose rules would leave an Edit to a
		// standing approval: a host that kept that for its session would
		// let the same call run unasked after moving to project infra.
		in := core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "s1", Route: "hooks", Tool: c.tool,
			Arguments: json.RawMessage(c.args), Reversibility: core.HardToReverse, Labels: core.Labels{Project: "web"}}
		if got := svc.CallCovered(in); got != c.want {
			t.Errorf("%s %s: call covered %v, want %v", c.tool, c.args, got, c.want)
		}
	}
	// A route with no rules leaves it to the asker; a batch or another
	// kind is never covered.
	if !svc.EveryCallCovered(core.AskInput{Kind: core.KindApproval, Tool: "x", Reversibility: core.Reversible}) {
		t.Error("the default route, no rules, asked reversible: want covered")
	}
	if svc.EveryCallCovered(core.AskInput{Kind: core.KindDecision, Route: "hooks", Tool: "Read"}) {
		t.Error("a decision: want not covered")
	}
}

// TestBatchCallsDecidedByRules: each call of a batch goes through the
// route's rules as an approval of that one call would: a call a rule
// allows or denies is decided at the ask, as a part no person looked at,
// so batching never slips a call past a deny; what is left is asked,
// shaped by the strictest of the rules its calls matched; a batch whose
// every call a rule decided closes at once, without cards.
func TestBatchCallsDecidedByRules(t *testing.T) {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	routes := coretest.APIRoutes()
	routes["leads"] = core.Route{Deciders: api}
	routes["infra"] = core.Route{Deciders: api}
	routes["guarded"] = core.Route{Deciders: api, Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}}, Rules: []core.Rule{
		{Name: "reads", When: `tool == "read_file"`, Decide: core.DecideAllow},
		{Name: "network", When: `tool == "fetch"`, Decide: core.DecideDeny, Reason: "No network."},
		{When: `tool == "shell" && args.command.contains("rm")`, Reversibility: core.HardToReverse, Route: "leads"},
		{When: `tool == "terraform"`, Route: "infra"},
		{When: `tool == "write_file"`, Reversibility: core.Reversible},
	}}
	svc, st := coretest.Open(t, coretest.Options{Routes: routes})
	ctx := t.Context()
	call := func(id, tool, args string) core.CallInput {
		return core.CallInput{ToolCallID: id, Tool: tool, Arguments: json.RawMessage(args)}
	}
	ask := func(run core.RunID, calls ...core.CallInput) (*core.Question, error) {
		q, _, err := svc.AskOrRepeat(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: run, Route: "guarded",
			Text: "These?", Reversibility: core.HardToReverse, Calls: calls})
		return q, err
	}

	// A read allowed and a fetch denied at the ask; the write is asked,
	// as reversible (its rule says so, and it is all that is left).
	q, err := ask("r1", call("c1", "read_file", `{"path":"a"}`), call("c2", "fetch", `{"url":"x"}`), call("c3", "write_file", `{"path":"b"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !q.Open() || len(q.Answers) != 2 || q.Reversibility != core.Reversible || q.Route != "guarded" {
		t.Fatalf("after the ask: open %v, %d parts decided, %s, route %s", q.Open(), len(q.Answers), q.Reversibility, q.Route)
	}
	for i, want := range []struct {
		opt, text string
	}{{core.ApproveOption, ""}, {core.DenyOption, "No network."}} {
		a := q.Answers[i]
		if a.Policy == nil || a.Policy.Index != i || a.OptionID != want.opt || a.Text != want.text || a.DecidedBy() != core.CloserPolicy {
			t.Errorf("call %d decided %+v, want %s by rule %d", i, a, want.opt, i)
		}
	}
	if q.Calls[2].Rule == nil || q.Calls[2].Rule.Index != 4 || q.Calls[2].Standing == nil {
		t.Errorf("the asked call %+v: want its rule recorded and a standing offer (it is reversible)", q.Calls[2])
	}
	o, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"},
		Calls: []core.CallDecision{{ToolCallID: "c3", OptionID: core.ApproveOption}}})
	if err != nil || !o.Closed {
		t.Fatalf("answering the write: %+v, %v", o, err)
	}
	results, err := core.CallResultsOf(o.Question)
	if err != nil {
		t.Fatal(err)
	}
	if text := results[1].Resume.Text; !strings.Contains(text, "no human looked at this call") ||
		!strings.Contains(text, "The policy rule denied the gated tool call: do not make it.") || !strings.Contains(text, "No network.") {
		t.Errorf("the denied fetch resumes with:\n%s", text)
	}
	whole, err := core.ResumeOf(o.Question)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Policy rules of this server decided 2 of the 3 calls of this batch at once, with no human looking at them; a human decided the other 1.",
		"A policy rule of this server decided it at once, when it was asked; no human looked at it.",
		"The rule's reason, as the server's operator wrote it, follows:",
	} {
		if !strings.Contains(whole.Text, want) {
			t.Errorf("the batch's resume lacks %q:\n%s", want, whole.Text)
		}
	}
	if line := card.OutcomeLine(o.Question); !strings.Contains(line, `1 by policy rule 0 of route "guarded" ("reads")`) || !strings.Contains(line, "1 by ops") {
		t.Errorf("outcome line %q", line)
	}

	// Every call decided by a rule: closed at once, and no card posted.
	if ds, err := st.Claim(ctx, core.SurfaceSlack, "test", 100, time.Minute, 0); err != nil || len(ds) == 0 {
		t.Fatalf("the first batch's card and its update: %d, %v", len(ds), err)
	}
	q, err = ask("r2", call("c1", "read_file", `{"path":"a"}`), call("c2", "fetch", `{"url":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if q.Open() || core.CloserOf(q) != core.CloserParts || !strings.HasSuffix(card.OutcomeLine(q), "nobody looked at these calls") {
		t.Fatalf("a batch every call of which a rule decided: %s, %q", q.State, card.OutcomeLine(q))
	}
	if ds, err := st.Claim(ctx, core.SurfaceSlack, "test", 10, time.Minute, 0); err != nil || len(ds) != 0 {
		t.Fatalf("cards for a batch nobody is asked about: %+v, %v", ds, err)
	}

	// A rm among the calls makes the batch hard to reverse, on the route
	// its rule names.
	q, err = ask("r3", call("c1", "shell", `{"command":"rm -rf build"}`), call("c2", "write_file", `{"path":"b"}`))
	if err != nil || q.Reversibility != core.HardToReverse || q.Route != "leads" || q.Calls[0].Standing != nil {
		t.Fatalf("a batch with a rm: %+v, %v", q, err)
	}

	// Two calls whose rules name two routes cannot be one batch.
	_, err = ask("r4", call("c1", "shell", `{"command":"rm x"}`), call("c2", "terraform", `{}`))
	if core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(err.Error(), `sends call "c1" to route "leads"`) || !strings.Contains(err.Error(), `sends call "c2" to route "infra"`) {
		t.Fatalf("two routes: %v", err)
	}
}

// TestRuleErrorsNameTheRule: a rule refused at load is named as its file
// lets a person find it, not by its index alone (a route of forty rules,
// or one edited since, sends them counting): by its name when it has one,
// else by its condition (its first 60 characters, on one line), else by
// what it decides.
func TestRuleErrorsNameTheRule(t *testing.T) {
	for _, c := range []struct {
		name       string
		rule       core.Rule
		want, spot string
	}{
		{"a named rule", core.Rule{Name: "no network", When: `tool == "fetch" &&`, Decide: core.DecideDeny},
			`routes.guarded.rules[1].when: line 1, column 19: Syntax error`, `(the rule named "no network")`},
		{"an unnamed rule", core.Rule{When: "tool ==\n  \"Bash\" &&\n", Decide: core.DecideDeny},
			`routes.guarded.rules[1].when: line 3, column 1: Syntax error`, `(the rule with when: tool == "Bash" &&)`},
		{"no condition", core.Rule{When: " ", Decide: core.DecideAllow, Reason: "reads are fine"},
			`routes.guarded.rules[1].when: a condition is required`, `(the rule with decide: allow, reason: reads are fine)`},
		{"a long condition", core.Rule{When: `tool == "Bash" && args.command.startsWith("terraform apply -auto-approve -var-file=prod.tfvars") && nope`},
			`routes.guarded.rules[1].when: line 1, column 101: undeclared reference to 'nope'`,
			`(the rule with when: tool == "Bash" && args.command.startsWith("terraform apply -…)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			routes := coretest.APIRoutes()
			routes["guarded"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
				Rules: []core.Rule{{When: `tool == "read_file"`, Decide: core.DecideAllow}, c.rule}}
			_, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
			if err == nil || !strings.HasPrefix(err.Error(), "core: "+c.want) || !strings.HasSuffix(err.Error(), c.spot) {
				t.Fatalf("New: %v\nwant an error starting %q and ending %s", err, c.want, c.spot)
			}
		})
	}
	// A rule's quorum its route cannot take, checked once every route's
	// rules compiled, is named alike.
	routes := coretest.APIRoutes()
	routes["guarded"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
		Rules: []core.Rule{{Name: "two leads", When: "true", Quorum: 2}}}
	_, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
	if err == nil || !strings.HasSuffix(err.Error(), `(the rule named "two leads")`) {
		t.Errorf("New: %v; want it to name the rule", err)
	}
}
