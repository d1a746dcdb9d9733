package hooks

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// Verdict is what the host is told.
type Verdict string

// The verdicts.
const (
	// Allow runs the call (with Decision.UpdatedInput, when set).
	Allow Verdict = "allow"
	// Deny refuses it, with a message for the model.
	Deny Verdict = "deny"
	// NoDecision leaves the prompt to the host, which asks the person at
	// the keyboard as if no hook had run.
	NoDecision Verdict = "none"
)

// Decision is a closed question read as the host's answer.
type Decision struct {
	Verdict Verdict
	// Message is what goes with the verdict: of a deny, what the model is
	// told (server text, the person's reason inside a fence); of an
	// allow, who allowed it, for the person at the keyboard (Claude
	// Code's PreToolUse shows it to them, not to the model).
	Message string
	// UpdatedInput replaces the tool input of an allow (Claude Code only).
	UpdatedInput json.RawMessage
	// Remember is the permission update an allow hands the host, so that
	// it stops asking for what the approver said not to ask again
	// (Claude Code's PermissionRequest only; see remember).
	Remember []PermissionUpdate
}

// PermissionUpdate is one of Claude Code's permission update entries: here
// always an allow rule for the host's session.
type PermissionUpdate struct {
	Type        string           `json:"type"`
	Rules       []PermissionRule `json:"rules"`
	Behavior    string           `json:"behavior"`
	Destination string           `json:"destination"`
}

// PermissionRule is a Claude Code permission rule: a tool, and what of its
// input the rule matches.
type PermissionRule struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// Decide reads q, the question p was asked as, as the host's answer.
// Only an approve or a deny (by people, a quorum, a standing approval or
// a rule) decides; a decline, a timeout, an expiry, a cancel or a
// question still open leaves the prompt to the host, but for the expiry
// of a Codex PreToolUse prompt, which denies (expiredDenies). covered,
// when the approve also granted a standing approval, asks whether the
// route's rules leave the calls the host would stop asking about to such
// an approval; nil is no.
func Decide(p Prompt, q *core.Question, covered Covered) Decision {
	none := Decision{Verdict: NoDecision}
	if expiredDenies(p, q) {
		return Decision{Verdict: Deny, Message: "askbridge got no answer about this call: " + core.ExpiredReason + ", so it is not run."}
	}
	if q == nil || q.Open() || q.State != core.StateAnswered || q.Resolution == nil || q.Resolution.Approved == nil {
		return none
	}
	res := q.Resolution
	if !*res.Approved {
		return Decision{Verdict: Deny, Message: denyMessage(q)}
	}
	d := Decision{Verdict: Allow, Message: allowMessage(q)}
	args := p.Input
	if res.Edit != nil {
		if !p.Editable() || len(res.Edit.Arguments) == 0 {
			// The approver approved other arguments than the host can run;
			// the host's own prompt is the honest fallback.
			return none
		}
		d.UpdatedInput, args = res.Edit.Arguments, res.Edit.Arguments
	}
	d.Remember = remember(p, res.Grants, args, covered)
	return d
}

// expiredDenies reports whether q, p's question, expired (its run ended
// while it waited) where no decision would let the call run unasked:
// Codex's PreToolUse, which reads no decision as leaving the call to
// Codex's own approval policy. Only the agent ends its runs, so that
// would get the call past the person about to decide it, as a failed ask
// would (FailedAsk denies one whose run had already ended). Claude
// Code's PreToolUse answers "ask" for it, and a PermissionRequest shows
// the host's own prompt: the person at the keyboard decides.
func expiredDenies(p Prompt, q *core.Question) bool {
	return q != nil && q.State == core.StateExpired && p.Host == Codex && p.Event == PreToolUse
}

// Covered asks whether the route's rules leave calls of the prompt's tool
// to a standing approval: with args nil, every call of it, whatever its
// arguments (core.Service.EveryCallCovered); else the call with args
// (core.Service.CallCovered).
type Covered func(args json.RawMessage) bool

// remember is the host's side of a standing approval granted with the
// approve (nil for none): an allow rule for the host's session, so that
// the host stops asking too. A rule the host keeps bypasses the hook
// altogether, and askbridge cannot take it back, so it is given only
// where it covers no more than askbridge would let through without a
// person, for no longer:
//
//   - only for a standing approval for the run, which is the host's
//     session (an agent's window may end within the session);
//   - for the whole tool, only when the route's rules leave every call of
//     it to a standing approval (covered(nil)): with a rule that asks a
//     rm -rf as hard to reverse, a host rule for every Bash call would let
//     that one run unasked. Those calls still reach the hook, and the
//     standing approval answers them at once, with nobody asked;
//   - never for a tool whose rule Claude Code applies to other tools
//     (sharedRuleTools): "Edit rules apply to all built-in tools that
//     edit files", and it applies Read rules to "all built-in tools that
//     read files like Grep and Glob" (its permissions docs, "Read &
//     Edit"), so a rule for Edit would let the session's Writes run
//     unasked, and one for Read its Greps and Globs, which neither the
//     approver (whose standing approval covers the one tool) nor the
//     route's rules let through;
//   - for the same arguments, only a Bash command with no wildcard, which
//     Claude Code matches exactly, and only when the rules leave that
//     very command to a standing approval (covered(args)): an approver's
//     edit gives arguments no rule was run on. Claude Code's Bash rule
//     matches the command alone, while the standing approval and the
//     rules saw the whole input, so the input must be the command and its
//     description (words for people, which run nothing) and nothing else:
//     with dangerouslyDisableSandbox, run_in_background or a timeout
//     beside it, a rule on the command would let the call through with
//     keys askbridge never checked, and hands over nothing.
//
// Revoking the standing approval does not reach the host: its session
// keeps the rule (README, "Hosts' permission prompts").
//
// Codex fails closed on a permission update, and Claude Code's PreToolUse
// takes none, so neither is given one.
func remember(p Prompt, grant *core.StandingRequest, args json.RawMessage, covered Covered) []PermissionUpdate {
	if grant == nil || grant.Scope != core.StandingRun || covered == nil || p.Host != ClaudeCode || p.Event != PermissionRequest {
		return nil
	}
	rule := PermissionRule{ToolName: p.Tool}
	if grant.SameArguments {
		command, ok := commandAlone(args)
		if p.Tool != "Bash" || !ok || strings.TrimSpace(command) == "" || strings.ContainsAny(command, "*\n") || !covered(args) {
			return nil
		}
		rule.RuleContent = command
	} else if slices.Contains(sharedRuleTools, p.Tool) || !covered(nil) {
		return nil
	}
	return []PermissionUpdate{{Type: "addRules", Rules: []PermissionRule{rule}, Behavior: "allow", Destination: "session"}}
}

// sharedRuleTools are Claude Code's built-in tools that edit files and
// those that read them: it applies a rule for Edit to every tool that
// edits files, and one for Read to those that read them (remember). The
// others of each family are held to the same bar, their rules' reach
// undocumented.
var sharedRuleTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit", "Read", "Grep", "Glob", "LS"}

// commandAlone is the command of a Bash input that holds nothing but
// its command and, optionally, its description (both strings): what a
// Claude Code rule for that command lets through no more of than
// askbridge checked. ok is false for any other input.
func commandAlone(args json.RawMessage) (command string, ok bool) {
	var in map[string]json.RawMessage
	if json.Unmarshal(args, &in) != nil {
		return "", false
	}
	for key, raw := range in {
		var s string
		switch {
		case key != "command" && key != "description":
			return "", false
		case json.Unmarshal(raw, &s) != nil:
			return "", false // null, or not a string
		case key == "command":
			command, ok = s, true
		}
	}
	return command, ok
}

// denyMessage tells the model who refused the call, worded from the
// recorded closer (law 12): a person (or several, by quorum), or a policy
// rule no person looked at. The reason (a person's words, a quorum's deny
// votes' words, or an operator's rule text) stays inside a fence.
func denyMessage(q *core.Question) string {
	who, whose, reason := denier(q)
	if strings.TrimSpace(reason) == "" {
		return who + ", with no reason."
	}
	return who + ". " + whose + " reason follows.\n" + fence.Wrap(fence.TagReason, reason).Explained()
}

// denier is who denied q's call, as the model is told it (denyMessage),
// the possessive their reason is introduced with, and that reason.
func denier(q *core.Question) (who, whose, reason string) {
	who, whose, reason = "A person denied this tool call in askbridge", "Their", q.Resolution.Reason
	switch core.CloserOf(q) {
	case core.CloserPolicy:
		who, whose = "An askbridge policy rule denied this tool call; no person looked at it", "Its"
	case core.CloserQuorum:
		// A quorum's close keeps no reason of its own: the words are the
		// deny votes'.
		who, reason = "The people asked in askbridge denied this tool call", denyNotes(q.CountedVotes())
	}
	return who, whose, reason
}

// allowMessage tells the person at the keyboard who allowed the call,
// worded from the recorded closer (law 12), as denyMessage is: a rule or
// a standing approval that let it through with nobody asked must not read
// as a person's approval. Server text only: no name, no reason.
func allowMessage(q *core.Question) string {
	switch core.CloserOf(q) {
	case core.CloserPolicy:
		return "An askbridge policy rule allowed this tool call; no person looked at it."
	case core.CloserStanding:
		return "A standing approval in askbridge allowed this tool call; nobody was asked about it."
	case core.CloserQuorum:
		return "The people asked in askbridge approved this tool call."
	}
	if q.Resolution.Edit != nil {
		return "A person approved this tool call in askbridge, with changes."
	}
	return "A person approved this tool call in askbridge."
}

// denyNotes are the words the deny votes gave, one paragraph each.
func denyNotes(votes []core.Vote) string {
	var notes []string
	for _, v := range votes {
		if t := strings.TrimSpace(v.Text); v.Choice == core.DenyOption && t != "" {
			notes = append(notes, t)
		}
	}
	return strings.Join(notes, "\n\n")
}

// noDecisionReason is what Claude Code's PreToolUse "ask" shows the person
// at the keyboard.
const noDecisionReason = "askbridge got no approval from chat; decide here."

// FailedAsk is what the host is told when p could not be asked (err),
// and whether it is to be told anything but the error. A PreToolUse
// hook that fails leaves the call to the host's own permission rules,
// which may run it unasked, and an agent can make the ask fail (its
// arguments over the limit, its own run ended), so:
//
//   - Claude Code's PreToolUse gets the "ask" of a prompt nobody
//     answered, saying why: the person at the keyboard decides;
//   - Codex's PreToolUse, which takes no "ask", gets a deny when
//     askbridge refused the prompt itself (CodeInvalid, CodeConflict) or
//     held its request off (Held): a call whose ask the agent can make
//     fail would otherwise get past every deny rule. When askbridge
//     cannot be reached it gets nothing, and Codex's own approval policy
//     decides, as it does for a call askbridge approved;
//   - every other prompt gets nothing (false): the host, told the hook
//     failed, shows its own prompt.
func FailedAsk(p Prompt, err error) ([]byte, bool) {
	if p.Event != PreToolUse {
		return nil, false
	}
	out := preToolUseSpecific{HookEventName: string(PreToolUse)}
	switch code := core.ErrorCode(err); {
	case p.Host == ClaudeCode:
		out.PermissionDecision = "ask"
		out.PermissionDecisionReason = "askbridge could not ask in chat (" + failureText(err) + "); decide here."
	case p.Host == Codex && (code == core.CodeInvalid || code == core.CodeConflict || isHeld(err)):
		out.PermissionDecision = "deny"
		out.PermissionDecisionReason = "askbridge refused to ask about this call (" + failureText(err) + "), so it is not run."
	default:
		return nil, false
	}
	b, merr := json.Marshal(preToolUseOutputWire{HookSpecificOutput: out})
	return b, merr == nil
}

// Held marks err as a refusal of a hook's request that the agent can
// bring about at will: a 429, too many requests, which askbridge answers
// an address that presented too many wrong tokens (and a proxy before it
// may answer one that sent too many requests). Any process on the host's
// machine, the model's shell among them, can do that from the address
// the hook calls from, so FailedAsk takes it as askbridge refusing the
// prompt, not as askbridge out of reach.
func Held(err error) error { return &held{err: err} }

type held struct{ err error }

func (e *held) Error() string { return e.err.Error() }
func (e *held) Unwrap() error { return e.err }

// isHeld reports whether err is, or wraps, a Held refusal.
func isHeld(err error) bool {
	_, ok := errors.AsType[*held](err)
	return ok
}

// Unreached is the hook command's failure to get an answer from the
// server (it could not be reached, or it answered with an error: Refused), which
// the person at the keyboard may read in full: it is what the command
// itself saw, not an error inside the server, whose details a door
// keeps to itself (core.ErrorMessage).
type Unreached struct {
	Server string // the server's address
	// Refused is set when the server (or a proxy before it) answered
	// with an error, which Err words: it answered, and said no.
	Refused bool
	Err     error
}

func (e *Unreached) Error() string {
	if e.Refused {
		return "askbridge at " + e.Server + " refused the ask: " + e.Err.Error()
	}
	return "askbridge at " + e.Server + " did not answer: " + e.Err.Error()
}

func (e *Unreached) Unwrap() error { return e.Err }

// Usage is the hook command's own usage error (a bad flag, a stray
// argument): the command in the host's hook settings is written wrong.
// The person at the keyboard can fix that, so the reason they read names
// it in full, with how the command is written, rather than "internal
// error". It carries no code: it is not askbridge refusing the call, so
// Codex is not told to deny it (FailedAsk).
type Usage struct {
	Synopsis string // the command's usage after "askbridge "
	Err      error
}

func (e *Usage) Error() string {
	return "usage error in the askbridge hook command: " + e.Err.Error() +
		"; fix the command in the host's hook settings to read: askbridge " + e.Synopsis
}

func (e *Usage) Unwrap() error { return e.Err }

// failureText is why an ask failed, as the host's person reads it.
func failureText(err error) string {
	if u, ok := errors.AsType[*Unreached](err); ok {
		return u.Error()
	}
	if u, ok := errors.AsType[*Usage](err); ok {
		return u.Error()
	}
	return core.ErrorMessage(err)
}

// eventPattern finds a hook input's event name in its raw bytes.
var eventPattern = regexp.MustCompile(`"hook_event_name"\s*:\s*"([A-Za-z]+)"`)

// Sniff is the prompt a host's hook input declares itself, as far as
// FailedAsk needs it (host and event), read from input that may be cut
// short or not parse: what an input refused before Parse gets.
func Sniff(h Host, body []byte) Prompt {
	p := Prompt{Host: h}
	if m := eventPattern.FindSubmatch(body); m != nil {
		p.Event = Event(m[1])
	}
	return p
}

// Output is the hook's stdout (or HTTP response body) for d: nil for no
// decision where the host reads an empty output that way. The exit code is
// 0 in every case.
func Output(p Prompt, d Decision) ([]byte, error) {
	if p.Event == PreToolUse {
		return preToolUseOutput(p, d)
	}
	if d.Verdict == NoDecision {
		// Both hosts show their own prompt when a PermissionRequest hook
		// exits 0 with nothing on stdout.
		return nil, nil
	}
	dec := permissionDecision{Behavior: string(d.Verdict)}
	switch d.Verdict {
	case Deny:
		dec.Message = d.Message
	case Allow:
		if p.Editable() {
			dec.UpdatedInput = d.UpdatedInput
			dec.UpdatedPermissions = d.Remember
		}
	}
	return json.Marshal(permissionOutput{HookSpecificOutput: permissionSpecific{HookEventName: string(PermissionRequest), Decision: dec}})
}

// preToolUseOutput is a PreToolUse answer. Claude Code's no decision is
// "ask": an empty output would let the host's permission rules run the
// call unasked, which is not what a team that hooked every call wants.
// Codex refuses a PreToolUse allow or ask (it fails the hook), so only a
// deny is said; anything else is an empty output, and the call goes on to
// Codex's own approval policy.
func preToolUseOutput(p Prompt, d Decision) ([]byte, error) {
	if p.Host == Codex && d.Verdict != Deny {
		return nil, nil
	}
	out := preToolUseSpecific{HookEventName: string(PreToolUse)}
	switch d.Verdict {
	case Allow:
		out.PermissionDecision = "allow"
		out.PermissionDecisionReason = d.Message
		out.UpdatedInput = d.UpdatedInput
	case Deny:
		out.PermissionDecision = "deny"
		out.PermissionDecisionReason = d.Message
	default:
		out.PermissionDecision = "ask"
		out.PermissionDecisionReason = noDecisionReason
	}
	return json.Marshal(preToolUseOutputWire{HookSpecificOutput: out})
}

type permissionOutput struct {
	HookSpecificOutput permissionSpecific `json:"hookSpecificOutput"`
}

type permissionSpecific struct {
	HookEventName string             `json:"hookEventName"`
	Decision      permissionDecision `json:"decision"`
}

type permissionDecision struct {
	Behavior           string             `json:"behavior"`
	UpdatedInput       json.RawMessage    `json:"updatedInput,omitempty"`
	UpdatedPermissions []PermissionUpdate `json:"updatedPermissions,omitempty"`
	Message            string             `json:"message,omitempty"`
}

type preToolUseOutputWire struct {
	HookSpecificOutput preToolUseSpecific `json:"hookSpecificOutput"`
}

type preToolUseSpecific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}
