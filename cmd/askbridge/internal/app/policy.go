package app

import (
	"context"
	"fmt"
	"io"
	"os"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// cmdPolicy is "askbridge policy test": it reads an ask (the API's
// AskRequest, as JSON), or with --host a host's hook input, and prints
// which of its route's policy rules decides it and why, from the
// configuration alone, without a server, so people can try rules before
// they trust them.
func cmdPolicy(_ context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	const synopsis = "policy test [--config FILE] [--agent NAME] [--host claude-code|codex [--route R]] [INPUT.json]  (from stdin without INPUT.json)"
	if !subcommand(args, "test", synopsis, stderr) {
		return exitUsage
	}
	fs := newFlags("policy test", stderr, synopsis)
	config := fs.String("config", getenv("ASKBRIDGE_CONFIG"), "the configuration file (default $ASKBRIDGE_CONFIG)")
	agent := fs.String("agent", "agent", "the asking agent's name, as its token would give it")
	hostName := fs.String("host", "", "read a hook input of this agent host (claude-code or codex) instead of an ask")
	route := fs.String("route", "", "with --host: the route the hook asks on, as askbridge hook --route")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 1 {
		return exitUsage
	}
	if *route != "" && *hostName == "" {
		return fail(stderr, fmt.Errorf("policy test: --route goes with --host (an ask names its own route)"))
	}
	var file File
	if *config != "" {
		raw, err := os.ReadFile(*config)
		if err != nil {
			return fail(stderr, err)
		}
		if file, err = parseFile(raw, standInSecrets); err != nil {
			return fail(stderr, fmt.Errorf("%s: %w", *config, err))
		}
	}
	in := stdin
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return fail(stderr, err)
		}
		defer f.Close()
		in = f
	}
	raw, err := io.ReadAll(in)
	if err != nil {
		return fail(stderr, err)
	}
	// Rules are evaluated from the configuration alone: the service is
	// built without a store, and Evaluate reads none.
	svc, err := core.New(nil, Settings{File: file}.coreConfig([]byte("policy test")), nil)
	if err != nil {
		return fail(stderr, err)
	}
	ask, err := policyInput(raw, *hostName, core.AgentID(*agent), *route, svc.Evaluate)
	if err != nil {
		return fail(stderr, err)
	}
	if ask.Kind == core.KindApproval && len(ask.Calls) > 0 {
		// Each call of a batch goes through the rules as an approval of
		// that one call would (what is left is asked together).
		vs, err := svc.EvaluateCalls(ask)
		if err != nil {
			return fail(stderr, fmt.Errorf("%s", core.ErrorMessage(err)))
		}
		for i, c := range ask.Calls {
			fmt.Fprintf(stdout, "call %s: %s\n", c.ToolCallID, vs[i].Explain())
		}
		return 0
	}
	v, err := svc.Evaluate(ask)
	if err != nil {
		return fail(stderr, fmt.Errorf("%s", core.ErrorMessage(err)))
	}
	if ask.Kind != core.KindApproval {
		fmt.Fprintf(stdout, "a %s is asked as configured: policy rules decide approvals of one tool call\n", ask.Kind)
	} else {
		fmt.Fprintln(stdout, v.Explain())
	}
	return 0
}

// standInSecrets is the environment policy test reads the configuration
// with: each variable it names for a secret (token_env, secret_env, ...)
// holds a stand-in, the same for the same name, so that rules can be
// tried from the configuration alone, where the secrets are not; no rule
// reads a secret. The file's other checks hold as they do for serve,
// which reads the real variables and refuses one that is empty.
func standInSecrets(name string) string { return "policy test stand-in for " + name }

// policyInput reads what policy test evaluates: a hook input of host, as
// the hook door would ask it (its rules run by evaluate where the door
// runs them: hooks.Prompt.AskAs), or else an ask request.
func policyInput(raw []byte, host string, agent core.AgentID, route string, evaluate func(core.AskInput) (core.RuleVerdict, error)) (core.AskInput, error) {
	if host != "" {
		h, err := hooks.ParseHost(host)
		if err != nil {
			return core.AskInput{}, fmt.Errorf("policy test: --host: %s", core.ErrorMessage(err))
		}
		p, err := hooks.Parse(h, raw)
		if err != nil {
			return core.AskInput{}, fmt.Errorf("the input is not a %s hook input: %s", h, core.ErrorMessage(err))
		}
		_, ask, err := p.AskAs(agent, route, evaluate)
		if err != nil {
			return core.AskInput{}, fmt.Errorf("%s", core.ErrorMessage(err))
		}
		return ask, nil
	}
	// Decoded as the server decodes an ask (adapters/httpapi's
	// decodeJSON): JSON v2 with unknown members refused, which also
	// refuses keys in another case, a key given twice (arguments
	// included), text that is not UTF-8 and anything after the ask. A
	// lenient decoder would print a verdict for an ask the server never
	// evaluates.
	var req client.AskRequest
	if err := jsonv2.Unmarshal(raw, &req, jsonv2.RejectUnknownMembers(true)); err != nil {
		return core.AskInput{}, fmt.Errorf("the ask is not an ask request: %w", err)
	}
	return req.Input(agent), nil
}
