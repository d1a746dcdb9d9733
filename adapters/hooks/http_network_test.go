package hooks_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestHookCodexNetworkAccessStricterRulesWin: Codex's network access
// prompt is checked against both the Bash and the NetworkAccess rules of
// its route, and the stricter wins. A route whose only rule denies
// NetworkAccess denies it; before, with no Bash rule matching, it was
// asked of a person as Bash ("Codex asks permission to use Bash"), and
// the deny never applied. A NetworkAccess rule that asks it as hard to
// reverse keeps it so where the Bash rules send it to a route whose own
// rules would leave it to a standing approval.
func TestHookCodexNetworkAccessStricterRulesWin(t *testing.T) {
	anyone := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	network := func(name string) core.Rule {
		return core.Rule{Name: name, When: `tool == "NetworkAccess"`}
	}
	netDeny := network("no network")
	netDeny.Decide, netDeny.Reason = core.DecideDeny, "No network from here."
	netAllow := network("network")
	netAllow.Decide = core.DecideAllow
	netHard := network("network")
	netHard.Reversibility, netHard.Route = core.HardToReverse, "security"
	netReversible := network("network")
	netReversible.Reversibility = core.Reversible
	bash := func(rev core.Reversibility, route string) core.Rule {
		return core.Rule{Name: "shell", When: `tool == "Bash"`, Reversibility: rev, Route: route}
	}
	curlDeny := core.Rule{Name: "no curl", When: `tool == "Bash" && args.command.startsWith("curl")`, Decide: core.DecideDeny, Reason: "No curl."}
	d := newDoorOn(t, map[string]core.Route{
		core.DefaultRoute: {Deciders: anyone},
		"net-deny":        {Deciders: anyone, Rules: []core.Rule{netDeny}},
		"net-deny-bash":   {Deciders: anyone, Rules: []core.Rule{bash(core.HardToReverse, ""), netDeny}},
		"bash-deny":       {Deciders: anyone, Rules: []core.Rule{curlDeny, netAllow}},
		"net-allow":       {Deciders: anyone, Rules: []core.Rule{netAllow}},
		"net-reversible":  {Deciders: anyone, Rules: []core.Rule{netReversible}},
		"net-hard":        {Deciders: anyone, Rules: []core.Rule{netHard}},
		"routed":          {Deciders: anyone, Rules: []core.Rule{bash(core.Reversible, "lenient")}},
		"routed-net-hard": {Deciders: anyone, Rules: []core.Rule{bash(core.Reversible, "lenient"), network("network")}},
		"lenient":         {Deciders: anyone, Rules: []core.Rule{netReversible}},
		"security":        {Deciders: anyone},
	})
	for _, c := range []struct {
		route   string
		tool    string // the tool it is asked as
		askedOn string // the route it is asked on
		rev     core.Reversibility
		deny    string // the deny in the body; "" for none (a person is asked)
	}{
		{"net-deny", "NetworkAccess", "net-deny", core.HardToReverse, "No network from here."},
		{"net-deny-bash", "NetworkAccess", "net-deny-bash", core.HardToReverse, "No network from here."},
		{"bash-deny", "Bash", "bash-deny", core.HardToReverse, "No curl."},
		// No Bash rule: asked as NetworkAccess, hard to reverse, unless
		// the NetworkAccess rules would leave it to less than that.
		{core.DefaultRoute, "NetworkAccess", core.DefaultRoute, core.HardToReverse, ""},
		{"net-hard", "NetworkAccess", "security", core.HardToReverse, ""},
		{"net-allow", "Bash", "net-allow", core.HardToReverse, ""},
		{"net-reversible", "Bash", "net-reversible", core.HardToReverse, ""},
		// Sent to another route by the Bash rules: asked as
		// NetworkAccess there, unless a NetworkAccess rule of the route
		// it came on asks it as hard to reverse.
		{"routed", "NetworkAccess", "lenient", core.Reversible, ""},
		{"routed-net-hard", "NetworkAccess", "routed-net-hard", core.HardToReverse, ""},
	} {
		t.Run(c.route, func(t *testing.T) {
			body := strings.Replace(hookFixture(t, "codex/permission-request.network.json"), `"session_id": "`, `"session_id": "`+c.route+"-", 1)
			call := d.start(t.Context(), "/v1/hooks/codex?wait=1ms&route="+c.route, body)
			got := call.body(t)
			q, err := d.svc.Get(t.Context(), call.id)
			if err != nil || q.Call == nil {
				t.Fatalf("question %+v, %v", q, err)
			}
			if q.Call.Tool != c.tool || q.Route != c.askedOn || q.Reversibility != c.rev {
				t.Fatalf("asked as %s on %s, %s; want %s on %s, %s", q.Call.Tool, q.Route, q.Reversibility, c.tool, c.askedOn, c.rev)
			}
			if c.deny == "" {
				if got != "" || q.State != core.StateCancelled {
					t.Fatalf("body %s, state %s; want a person asked (withdrawn at the wait's end), no decision", got, q.State)
				}
				return
			}
			if !strings.Contains(got, `"behavior":"deny"`) || !strings.Contains(got, c.deny) || core.CloserOf(q) != core.CloserPolicy {
				t.Fatalf("body %s, closed by %s; want the rule's deny", got, core.CloserOf(q))
			}
		})
	}
}

// countingRules is a core that counts how often the door runs the
// policy rules.
type countingRules struct {
	*core.Service
	n atomic.Int32
}

func (c *countingRules) Evaluate(in core.AskInput) (core.RuleVerdict, error) {
	c.n.Add(1)
	return c.Service.Evaluate(in)
}

// TestHookCodexNetworkAccessOverTheLimitNotEvaluated: a Codex network
// access prompt whose arguments are over core.MaxArgumentsLen is refused
// before any policy rule runs on them, with the refusal the ask itself
// would give; before, the rules ran two or three times on up to 1 MiB of
// input that the ask then refused anyway.
func TestHookCodexNetworkAccessOverTheLimitNotEvaluated(t *testing.T) {
	svc := &countingRules{Service: coretest.Service(t, coretest.OpenStore(t), coretest.Options{})}
	d := &door{t: t, svc: svc.Service, srv: mount(t, svc.Service, t.Context())}
	command := "curl https://example.com/install.sh " + strings.Repeat("a ", core.MaxArgumentsLen/2)
	body := strings.Replace(hookFixture(t, "codex/permission-request.network.json"), "curl https://example.com/install.sh", command, 1)
	p, err := hooks.Parse(hooks.Codex, []byte(body))
	if err != nil || !p.NetworkAccess() {
		t.Fatalf("%v, network access %v", err, p.NetworkAccess())
	}
	in, _ := p.Ask(agent, "")
	want := in.Validate() // the refusal the ask gives
	if core.ErrorCode(want) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(want), "the limit is 16384") {
		t.Fatalf("the ask itself: %v", want)
	}
	_, _, err = p.AskAs(agent, "", svc.Evaluate)
	if core.ErrorCode(err) != core.CodeInvalid || core.ErrorMessage(err) != core.ErrorMessage(want) || svc.n.Load() != 0 {
		t.Errorf("AskAs: %v after %d evaluations; want %q after none", err, svc.n.Load(), core.ErrorMessage(want))
	}
	// The door runs the rules through AskAs too, under its pin
	// (core.Pinned.Evaluate), so it refuses the prompt as AskAs does.
	status, _, out := d.send(t.Context(), "/v1/hooks/codex", body)
	if status != http.StatusBadRequest || !strings.Contains(out, core.ErrorMessage(want)) {
		t.Fatalf("the door: %d %s; want 400 %q", status, out, core.ErrorMessage(want))
	}
}
