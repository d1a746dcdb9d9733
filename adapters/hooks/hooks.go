// Package hooks is the door of agent hosts' own permission prompts
// (Claude Code's and Codex's hooks): it translates a hook input into an
// approval ask, and the closed approval back into the decision JSON the
// host reads from the hook. Handler serves the hosts' HTTP hooks (POST
// /v1/hooks/{host}, mounted by the program behind the API's agent
// tokens); the "askbridge hook" command is the hosts' command hook, a
// client of that endpoint.
//
// The formats are the hosts' own (see testdata/SOURCES). Fields a host
// sends that askbridge does not use are accepted, since hosts add fields
// over time; a required field that is missing or of the wrong type is
// refused with a core.CodeInvalid error naming it.
package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/askbridge/askbridge/core"
)

// Host is an agent host whose hooks askbridge speaks.
type Host string

// The hosts, as they appear in POST /v1/hooks/{host} and --host.
const (
	ClaudeCode Host = "claude-code"
	Codex      Host = "codex"
)

// Hosts lists every host, in the order messages name them.
var Hosts = []Host{ClaudeCode, Codex}

// ParseHost reads a host's name.
func ParseHost(s string) (Host, error) {
	switch h := Host(s); h {
	case ClaudeCode, Codex:
		return h, nil
	}
	return "", core.Errorf(core.CodeNotFound, "hook", "host %q is not one of claude-code, codex", s)
}

// String returns the host's name.
func (h Host) String() string { return string(h) }

// title is how a card names the host.
func (h Host) title() string {
	if h == Codex {
		return "Codex"
	}
	return "Claude Code"
}

// Event is the hook event a prompt came from.
type Event string

// The events askbridge answers.
const (
	// PermissionRequest runs when the host is about to show its own
	// permission prompt.
	PermissionRequest Event = "PermissionRequest"
	// PreToolUse runs before every call of a matched tool, for teams that
	// want every call asked, not only the ones the host would prompt for.
	// Codex takes only a deny from it: what askbridge approves then goes
	// on to Codex's own approval policy, which may still ask at the
	// keyboard.
	PreToolUse Event = "PreToolUse"
)

// Prompt is one hook input, read.
type Prompt struct {
	Host      Host
	Event     Event
	SessionID string
	Tool      string
	// Input is the tool input exactly as the host sent it.
	Input json.RawMessage
	// ToolUseID is the host's id of the tool call, where it sends one.
	ToolUseID string
	// TurnID is Codex's turn, where sent.
	TurnID string
	Cwd    string
	// SubagentID is the host's id of the subagent the prompt came from
	// (its agent_id, sent by both hosts from inside a subagent only), and
	// SubagentType that subagent's kind (agent_type). Subagents share
	// their session's session_id, so this is what tells two of them
	// apart. It names no askbridge agent: the agent that asks is the one
	// whose token made the call, whatever the host's input says.
	SubagentID   string
	SubagentType string
}

// op names hook errors.
const op = "hook"

func invalid(format string, args ...any) error {
	return core.Errorf(core.CodeInvalid, op, format, args...)
}

// Parse reads a host's hook input. It refuses an event askbridge does not
// answer for that host, with a message saying so.
func Parse(h Host, body []byte) (Prompt, error) {
	// JSON v2 reads it strictly: two equal keys (anywhere, tool_input
	// included) or bad UTF-8 would let the arguments bound by digest
	// differ from what the host shows, so both are refused.
	var fields map[string]jsontext.Value
	if err := jsonv2.Unmarshal(body, &fields); err != nil || fields == nil {
		var syn *jsontext.SyntacticError
		switch {
		case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
			return Prompt{}, invalid("the body is not a %s hook input: it has a duplicate key %q", h, syn.JSONPointer.LastToken())
		case errors.As(err, &syn) && strings.Contains(syn.Err.Error(), "invalid UTF-8"):
			return Prompt{}, invalid("the body is not a %s hook input: it is not valid UTF-8", h)
		}
		return Prompt{}, invalid("the body is not a %s hook input: want a JSON object", h)
	}
	p := Prompt{Host: h}
	var event string
	for _, f := range []struct {
		name     string
		dst      *string
		required bool
		max      int
	}{
		{"hook_event_name", &event, true, 64},
		{"session_id", &p.SessionID, true, core.MaxIDLen},
		{"tool_name", &p.Tool, true, core.MaxToolLen},
		{"tool_use_id", &p.ToolUseID, false, core.MaxIDLen},
		{"turn_id", &p.TurnID, false, core.MaxIDLen},
		{"cwd", &p.Cwd, false, 4096},
		{"agent_id", &p.SubagentID, false, 4096},
		{"agent_type", &p.SubagentType, false, 4096},
	} {
		if err := str(fields, f.name, f.dst, f.required, f.max); err != nil {
			return Prompt{}, err
		}
	}
	p.Event = Event(event)
	switch p.Event {
	case PermissionRequest, PreToolUse:
	default:
		return Prompt{}, invalid("hook_event_name %q is not supported for %s: askbridge answers PermissionRequest and PreToolUse", event, h)
	}
	raw, ok := fields["tool_input"]
	if !ok {
		return Prompt{}, invalid("tool_input is required")
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return Prompt{}, invalid("tool_input must be a JSON object")
	}
	p.Input = json.RawMessage(raw)
	return p, nil
}

// str reads one string field.
func str(fields map[string]jsontext.Value, name string, dst *string, required bool, max int) error {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		if required {
			return invalid("%s is required", name)
		}
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return invalid("%s must be a string", name)
	}
	if required && strings.TrimSpace(*dst) == "" {
		return invalid("%s must not be blank", name)
	}
	if len(*dst) > max {
		return invalid("%s is %d bytes; the limit is %d", name, len(*dst), max)
	}
	return nil
}

// NetworkAccessTool is the tool a Codex network access prompt is asked
// as (Prompt.NetworkAccess, Prompt.AskAs).
const NetworkAccessTool = "NetworkAccess"

// networkAccessPrefix begins the description of Codex's network access
// prompts: "network-access https://example.com:443".
const networkAccessPrefix = "network-access "

// NetworkAccess reports whether p looks like Codex's network access
// prompt: Codex sends one when a command in its sandbox reaches for a
// host its network policy does not allow, as a PermissionRequest for
// tool Bash whose input is the command (the one that reached out, or
// "network-access <target>") and the description "network-access
// <target>" (openai/codex, PermissionRequestPayload::bash in
// codex-rs/core/src/tools/network_approval.rs; testdata/SOURCES).
//
// Only looks like: for an ordinary command Codex's description is the
// model's own justification, which may say the same. So askbridge takes
// it as a reason to ask more, never less (Prompt.AskAs).
func (p Prompt) NetworkAccess() bool {
	if p.Host != Codex || p.Event != PermissionRequest || p.Tool != "Bash" {
		return false
	}
	var in struct {
		Description string `json:"description"`
	}
	return json.Unmarshal(p.Input, &in) == nil && strings.HasPrefix(in.Description, networkAccessPrefix)
}

// AskAs is the ask p becomes on route, by agent, as the hook door asks
// it; evaluate runs the route's policy rules (core.Service.Evaluate; the
// door's is its pin's, core.Pinned.Evaluate, under the configuration the
// ask is then made under).
// A Codex network access prompt (NetworkAccess) comes as a Bash call;
// asked as one, a standing approval granted on an ordinary command
// ("don't ask again" for Bash in this run) would approve the network
// access too, with nobody asked. So it is asked as tool NetworkAccess,
// which no Bash standing approval covers, and which is hard to reverse
// unless a rule for NetworkAccess says otherwise.
//
// The mark is the input's description, which for an ordinary command is
// the model's own words; a command dressed as network access must not
// escape what the Bash rules do with it, nor network access what the
// operator's NetworkAccess rules do with it. So the prompt is checked
// against both, and the stricter wins: a deny from either denies it (as
// the tool whose rule denied); one the Bash rules ask as hard to reverse
// or of a quorum (which no standing approval can cover), or could not
// evaluate, is asked as Bash; with no Bash rule matching it is asked as
// NetworkAccess, unless the NetworkAccess rules would leave it to less
// than a person (allow it, or ask it as reversible), when it is asked as
// Bash, as configured. What the Bash rules allow, or leave to a standing
// approval, is asked as NetworkAccess: on the route they send it to, or
// on route itself where a NetworkAccess rule of route asks it as hard to
// reverse and the other route's would not.
func (p Prompt) AskAs(agent core.AgentID, route string, evaluate func(core.AskInput) (core.RuleVerdict, error)) (Prompt, core.AskInput, error) {
	in, err := p.Ask(agent, route)
	if err != nil || !p.NetworkAccess() {
		return p, in, err
	}
	if len(in.Arguments) > core.MaxArgumentsLen {
		// The ask would refuse it; refused here, in core's own words
		// (Validate), the rules are not first run two or three times on
		// up to a hook input's 1 MiB, to no end.
		if err := in.Validate(); err != nil {
			return p, in, err
		}
	}
	bash, err := evaluate(in)
	if err != nil || denies(bash) {
		// Denied as Bash; an unknown route is refused by the ask.
		return p, in, nil
	}
	net := p
	net.Tool = NetworkAccessTool
	netIn, err := net.Ask(agent, route)
	if err != nil {
		return p, in, nil
	}
	v, err := evaluate(netIn)
	switch {
	case err != nil:
		return p, in, nil
	case denies(v):
		return net, netIn, nil
	case bash.Rule == nil && bash.Err == nil:
		if leftToAPerson(v) {
			return net, netIn, nil
		}
		return p, in, nil
	case leftToAPerson(bash):
		return p, in, nil
	}
	to := bash.Rule.Route
	if bash.Rule.Decide != core.DecideAsk || to == "" || to == route {
		return net, netIn, nil
	}
	toIn, err := net.Ask(agent, to)
	if err != nil {
		return p, in, nil
	}
	if (v.Rule != nil || v.Err != nil) && leftToAPerson(v) {
		// route's own NetworkAccess rule asks it as hard to reverse:
		// asked there, unless the other route's rules are as strict.
		if w, err := evaluate(toIn); err != nil || !denies(w) && !leftToAPerson(w) {
			return net, netIn, nil
		}
	}
	return net, toIn, nil
}

// denies reports whether the rules deny the ask at once.
func denies(v core.RuleVerdict) bool {
	return v.Err == nil && v.Rule != nil && v.Rule.Decide == core.DecideDeny
}

// leftToAPerson reports whether the rules leave a hook's ask (hard to
// reverse unless a rule says otherwise) to a person, with no standing
// approval to cover it: no rule matched, one could not be evaluated, or
// an ask rule keeps it hard to reverse or asks a quorum.
func leftToAPerson(v core.RuleVerdict) bool {
	r := v.Rule
	if v.Err != nil || r == nil {
		return true
	}
	return r.Decide == core.DecideAsk && (r.Reversibility != core.Reversible || r.Quorum > 1)
}

// Editable reports whether an approver may change the input before
// approving. Claude Code takes an updated input and runs the tool with it;
// Codex fails closed on one, so its prompts offer no edit.
func (p Prompt) Editable() bool { return p.Host == ClaudeCode }

// ToolCallID is the host's tool use id where it sends one; otherwise a
// digest of the prompt asked on route ("" the default): host, event,
// session, turn, tool, working directory, route, subagent and canonical
// input, so a host that runs the hook again for the same prompt finds
// the same question while it is open (door.ask says what happens once
// it closed), and two subagents of one session prompting for the same
// command at once are two prompts, each answered on its own.
//
// The digest covers everything of the prompt that the ask it makes
// carries (the working directory becomes the project label and the
// context; the route is the ask's), which core's idempotency compares
// a repeat with: an identical command from another directory, or on
// another route, is another prompt with a question of its own, not a
// repeat refused for its different body.
func (p Prompt) ToolCallID(route string) (string, error) {
	if p.ToolUseID != "" {
		return p.ToolUseID, nil
	}
	canon, err := core.CanonicalArguments(p.Input)
	if err != nil {
		return "", invalid("tool_input: %s", core.ErrorMessage(err))
	}
	if route == "" {
		route = core.DefaultRoute
	}
	h := sha256.New()
	parts := []string{string(p.Host), string(p.Event), p.SessionID, p.TurnID, p.Tool, p.Cwd, route}
	if p.SubagentID != "" {
		// Only where there is one, so that the main thread's prompts keep
		// the digest they had before subagents were told apart. (A
		// prompt with a description left open across the upgrade that
		// marked the description as the agent's is still refused as a
		// different ask, since the repeat check compares the context
		// too: the host then asks at the keyboard, or Codex's PreToolUse
		// denies, once; a clean stop withdraws such questions.) No main-thread
		// prompt digests like a subagent's: where this part's length
		// (below) begins with a zero byte, the input begins with "{".
		parts = append(parts, p.SubagentID)
	}
	for _, part := range parts {
		// Each part with its length, so that no two prompts' parts run
		// together into one digest.
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	h.Write(canon)
	return "hook-" + hex.EncodeToString(h.Sum(nil))[:40], nil
}

// askedAgain is the tool call id of a prompt asked again after the
// question of id, whose tool call id was prev, closed (door.ask).
func askedAgain(prev string, closed core.QuestionID) string {
	h := sha256.Sum256([]byte(prev + "\x00" + string(closed)))
	return "hook-" + hex.EncodeToString(h[:])[:40]
}

// Ask is the approval the prompt becomes, asked by agent on route ("" the
// default). The host does not say how hard the call is to reverse, so
// without a rule it is hard to reverse: the card says so and no standing
// approval covers it.
func (p Prompt) Ask(agent core.AgentID, route string) (core.AskInput, error) {
	id, err := p.ToolCallID(route)
	if err != nil {
		return core.AskInput{}, err
	}
	in := core.AskInput{
		Kind:          core.KindApproval,
		Agent:         agent,
		RunID:         core.RunID(p.SessionID), // the host's session is the run
		ToolCallID:    id,
		Labels:        core.Labels{Project: project(p.Cwd)},
		Text:          p.text(),
		Context:       p.context(),
		Reversibility: core.HardToReverse,
		Route:         route,
		Tool:          p.Tool,
		Arguments:     p.Input,
		HostPrompt:    true,
	}
	if p.Editable() {
		in.Editable = &core.Editable{All: true}
	}
	return in, nil
}
