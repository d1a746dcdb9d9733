package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence/fencetest"
	"github.com/askbridge/askbridge/internal/coretest"
)

// hookArguments are the keys of a hook's output that carry the arguments
// the call is run with (the hook's approved_arguments: updatedInput, and
// the command of a session rule made from them), which are data, not
// words for the model.
var hookArguments = []string{"updatedInput", "updatedPermissions[].rules[].ruleContent"}

// TestHookOutputFencesEveryHumanWord asks a host's prompt of each host
// and hook event, plants a hostile marker in every field a person (or an
// operator's rule) writes and in every decider's name, closes the
// question every way a hook's question closes (a person's deny or
// approve with words, an edit, a standing approval granted and then
// covering, a quorum's votes, a policy rule, a decline, a cancel), and
// reads what the host reads back. It fails if any marker is outside a
// well-formed fence, and if a marker the door hands over (a deny's
// words) never reached it fenced. It is the hook door's part of law 11's
// property test (cmd/askbridge/internal/app's
// TestNothingUnfencedReachesAnAgent), on the same harness (fencetest).
func TestHookOutputFencesEveryHumanWord(t *testing.T) {
	mk := fencetest.New()
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	bash := `tool == "Bash"`
	routes := map[string]core.Route{
		core.DefaultRoute: {Deciders: api},
		"quorum":          {Deciders: api, Quorum: 2, MaxQuorum: 2},
		"counted":         {People: []string{core.PersonPrefix + "pat", core.PersonPrefix + "quinn", core.PersonPrefix + "rae"}, Quorum: 2, MaxQuorum: 2, Deny: core.DenyCount},
		"deny-rule":       {Deciders: api, Rules: []core.Rule{{Name: "no-bash", When: bash, Decide: core.DecideDeny, Reason: mk.Carried("a policy rule's deny reason")}}},
		"allow-rule":      {Deciders: api, Rules: []core.Rule{{Name: "bash", When: bash, Decide: core.DecideAllow, Reason: mk.Dropped("a policy rule's allow reason")}}},
		"standing":        {Deciders: api, Rules: []core.Rule{{Name: "bash-reversible", When: bash, Decide: core.DecideAsk, Reversibility: core.Reversible}}},
	}
	people := map[string]core.Person{
		"pat":   {DisplayName: mk.Dropped("a configured person's display name"), IDs: map[core.Surface][]string{core.SurfaceAPI: {"pat-token"}}},
		"quinn": {DisplayName: mk.Dropped("another configured person's display name"), IDs: map[core.Surface][]string{core.SurfaceAPI: {"quinn-token"}}},
		"rae":   {IDs: map[core.Surface][]string{core.SurfaceAPI: {"rae-token"}}}, // a third, so that one deny of two does not settle it
	}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: routes, People: people})
	d := &door{t: t, svc: svc, srv: mount(t, svc, t.Context())}
	anon := core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: mk.Dropped("an API decider's display name")}
	pat := core.Decider{Surface: core.SurfaceAPI, ID: "pat-token", Name: "Pat"}
	quinn := core.Decider{Surface: core.SurfaceAPI, ID: "quinn-token", Name: "Quinn"}

	answer := func(by core.Decider, in core.AnswerInput) func(*testing.T, core.QuestionID, bool) {
		return func(t *testing.T, id core.QuestionID, _ bool) {
			t.Helper()
			in.QuestionID, in.Decider = id, by
			if _, err := svc.Answer(t.Context(), in); err != nil {
				t.Fatalf("answer %+v: %v", in, err)
			}
		}
	}
	inTurn := func(fs ...func(*testing.T, core.QuestionID, bool)) func(*testing.T, core.QuestionID, bool) {
		return func(t *testing.T, id core.QuestionID, editable bool) {
			for _, f := range fs {
				f(t, id, editable)
			}
		}
	}
	deny := func(text string) core.AnswerInput { return core.AnswerInput{OptionID: core.DenyOption, Text: text} }
	approve := func(text string) core.AnswerInput { return core.AnswerInput{OptionID: core.ApproveOption, Text: text} }
	edited := must(json.Marshal(map[string]string{"command": mk.Dropped("an edited argument")}))
	editReason := mk.Dropped("an edit's reason")
	grantReason := mk.Dropped("a standing grant's reason")

	// rows are the ways a hook's question closes; close is nil for one
	// closed at the ask. A row of the same session asks in the host's
	// session (and so the run) of the row before it.
	rows := []struct {
		name, route string
		sameSession bool
		close       func(t *testing.T, id core.QuestionID, editable bool)
		by          core.Closer // who closes it, so that each row proves its way
	}{
		{"denied with a reason", "", false, answer(anon, deny(mk.Carried("a deny reason"))), core.CloserPerson},
		{"denied with a reason by a configured person", "", false, answer(pat, deny(mk.Carried("a configured person's deny reason"))), core.CloserPerson},
		{"approved with a reason", "", false, answer(anon, approve(mk.Dropped("an approval's reason"))), core.CloserPerson},
		{"approved with edits where the host takes them", "", false, func(t *testing.T, id core.QuestionID, editable bool) {
			in := approve(editReason)
			if editable {
				in.Arguments = edited
			}
			answer(anon, in)(t, id, editable)
		}, core.CloserPerson},
		{"a quorum's veto after an approve vote, each with a note", "quorum", false, inTurn(
			answer(pat, approve(mk.Dropped("an approve vote's note"))),
			answer(quinn, deny(mk.Carried("a veto's note"))),
		), core.CloserQuorum},
		{"a quorum's counted denies, each with a note", "counted", false, inTurn(
			answer(pat, deny(mk.Carried("a counted deny's note"))),
			answer(quinn, deny(mk.Carried("another counted deny's note"))),
		), core.CloserQuorum},
		{"denied by a policy rule", "deny-rule", false, nil, core.CloserPolicy},
		{"allowed by a policy rule", "allow-rule", false, nil, core.CloserPolicy},
		{"approved with a standing approval granted", "standing", false, answer(pat, core.AnswerInput{OptionID: core.ApproveOption, Text: grantReason,
			Standing: &core.StandingRequest{Scope: core.StandingRun}}), core.CloserPerson},
		{"covered by that standing approval", "standing", true, nil, core.CloserStanding},
		{"declined", "", false, func(t *testing.T, id core.QuestionID, _ bool) {
			if _, err := svc.Decline(t.Context(), id, anon); err != nil {
				t.Fatal(err)
			}
		}, core.CloserDecline},
		{"cancelled by an operator with a reason", "", false, func(t *testing.T, id core.QuestionID, _ bool) {
			if _, err := svc.Cancel(t.Context(), core.CancelInput{QuestionID: id, By: anon, Reason: mk.Dropped("an operator's cancel reason")}); err != nil {
				t.Fatal(err)
			}
		}, core.CloserOperatorCancel},
	}
	fixtures := []struct{ host, file string }{
		{"claude-code", "claude-code/permission-request.bash.json"},
		{"claude-code", "claude-code/pre-tool-use.bash.json"},
		{"codex", "codex/permission-request.bash.json"},
		{"codex", "codex/pre-tool-use.bash.json"},
	}
	for fi, fx := range fixtures {
		session := ""
		for ri, row := range rows {
			if !row.sameSession {
				session = fmt.Sprintf("fence-%d-%d", fi, ri)
			}
			t.Run(fx.file+"/"+row.name, func(t *testing.T) {
				set := map[string]string{"session_id": string(must(json.Marshal(session)))}
				if strings.Contains(hookFixture(t, fx.file), `"tool_use_id"`) {
					set["tool_use_id"] = fmt.Sprintf(`"toolu_fence_%d_%d"`, fi, ri)
				}
				path := "/v1/hooks/" + fx.host
				if row.route != "" {
					path += "?route=" + url.QueryEscape(row.route)
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				call := d.start(ctx, path, hookInput(t, fx.file, set))
				if row.close != nil {
					row.close(t, call.id, fx.host == "claude-code")
				}
				out := call.body(t)
				q, err := svc.Get(t.Context(), call.id)
				if err != nil || q.Open() || core.CloserOf(q) != row.by {
					t.Fatalf("the prompt's question: %+v, %v; want it closed by %s", q, err, row.by)
				}
				if out != "" {
					mk.CheckJSON(t, path+" "+fx.file, []byte(out), hookArguments...)
				}
			})
		}
	}
	mk.CheckCarried(t, "the host")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
