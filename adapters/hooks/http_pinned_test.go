package hooks_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// netConfigs are two configurations each of which denies Codex's
// network access prompt on its own: A allows Bash and denies
// NetworkAccess (asked as NetworkAccess, denied), B denies Bash (asked
// as Bash, denied) and allows NetworkAccess.
func netConfigs() (a, b map[string]core.Route) {
	anyone := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	a = map[string]core.Route{core.DefaultRoute: {Deciders: anyone, Rules: []core.Rule{
		{Name: "shell", When: `tool == "Bash"`, Decide: core.DecideAllow},
		{Name: "no network", When: `tool == "NetworkAccess"`, Decide: core.DecideDeny, Reason: "A: no network."},
	}}}
	b = map[string]core.Route{core.DefaultRoute: {Deciders: anyone, Rules: []core.Rule{
		{Name: "no shell", When: `tool == "Bash"`, Decide: core.DecideDeny, Reason: "B: no shell."},
		{Name: "network", When: `tool == "NetworkAccess"`, Decide: core.DecideAllow},
	}}}
	return a, b
}

// reloadingValues is a core whose store values, which the door reads
// between the rules it runs in AskAs and the ask (the newest link of the
// prompt's chain), put the configuration to in force first: a reload
// landing between the two, at a moment the test chooses.
type reloadingValues struct {
	*core.Service
	t  *testing.T
	to map[string]core.Route
}

func (r *reloadingValues) Values() core.Values {
	return reloadOnRead{Values: r.Service.Values(), r: r}
}

type reloadOnRead struct {
	core.Values
	r *reloadingValues
}

func (v reloadOnRead) Value(ctx context.Context, key string) (string, error) {
	if v.r.to != nil {
		if err := v.r.Service.Reconfigure(core.Config{Routes: v.r.to, ActorKey: []byte(coretest.ActorKey)}); err != nil {
			v.r.t.Fatal(err)
		}
		v.r.to = nil
	}
	return v.Values.Value(ctx, key)
}

// TestHookNetworkAccessOneConfigurationAcrossAReload: the door decides a
// Codex network access prompt under one configuration, however a reload
// falls between the rules it runs to choose the ask and the ask itself.
// Each of A and B alone denies it; before, a reload from one to the other
// between the two had the door answer allow: A's rules chose to ask it
// as NetworkAccess (A denies it), and B's rules, reading the ask afresh,
// allowed NetworkAccess; or B's chose Bash, which A's then allowed.
func TestHookNetworkAccessOneConfigurationAcrossAReload(t *testing.T) {
	a, b := netConfigs()
	for _, c := range []struct {
		name     string
		from, to map[string]core.Route
		deny     string
	}{
		{"A alone", a, nil, "A: no network."},
		{"B alone", b, nil, "B: no shell."},
		{"A, then B", a, b, "A: no network."},
		{"B, then A", b, a, "B: no shell."},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := &reloadingValues{Service: coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: c.from}), t: t, to: c.to}
			d := &door{t: t, svc: svc.Service, srv: mount(t, svc, t.Context())}
			status, id, got := d.send(t.Context(), "/v1/hooks/codex?wait=1ms", hookFixture(t, "codex/permission-request.network.json"))
			if status != http.StatusOK || !strings.Contains(got, `"behavior":"deny"`) || !strings.Contains(got, c.deny) {
				t.Fatalf("status %d, body %s; want the deny %q", status, got, c.deny)
			}
			if svc.to != nil {
				t.Fatal("the door read no value between its rules and the ask: the reload never happened")
			}
			q, err := d.svc.Get(t.Context(), id)
			if err != nil || core.CloserOf(q) != core.CloserPolicy || q.Resolution.Approved == nil || *q.Resolution.Approved {
				t.Fatalf("question %+v, %v; want it denied by a rule", q, err)
			}
		})
	}
}

// TestAskAsUnderAPinAcrossAReload: a reload between the rules AskAs runs
// over a Codex network access prompt (as Bash, then as NetworkAccess)
// changes nothing of what they, and the ask made through the same pin,
// decide: each of A and B denies it alone, and so does a reload from one
// to the other after the first of them.
func TestAskAsUnderAPinAcrossAReload(t *testing.T) {
	a, b := netConfigs()
	p, err := hooks.Parse(hooks.Codex, []byte(hookFixture(t, "codex/permission-request.network.json")))
	if err != nil || !p.NetworkAccess() {
		t.Fatalf("%v, network access %v", err, p.NetworkAccess())
	}
	for _, c := range []struct {
		name     string
		from, to map[string]core.Route
		rule     string // the rule that denies it
		runs     int    // how many times AskAs runs the rules
	}{
		{"A, then B", a, b, "no network", 2},
		{"B, then A", b, a, "no shell", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: c.from})
			pin := svc.Pin()
			defer pin.Close()
			runs := 0
			evaluate := func(in core.AskInput) (core.RuleVerdict, error) {
				v, err := pin.Evaluate(in)
				if runs++; runs == 1 {
					if err := svc.Reconfigure(core.Config{Routes: c.to, ActorKey: []byte(coretest.ActorKey)}); err != nil {
						t.Fatal(err)
					}
				}
				return v, err
			}
			_, in, err := p.AskAs(agent, "", evaluate)
			if err != nil || runs != c.runs {
				t.Fatalf("AskAs: %v after %d runs of the rules; want %d", err, runs, c.runs)
			}
			q, _, err := pin.AskOrRepeat(t.Context(), in)
			if err != nil || q.Open() || core.CloserOf(q) != core.CloserPolicy || *q.Resolution.Approved || q.Rule == nil || q.Rule.Name != c.rule {
				t.Fatalf("the ask: %+v, %v; want it denied by rule %q", q, err, c.rule)
			}
		})
	}
}
