package client

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
)

// The API shows a question in two views, each a type of its own, built
// field by field from core's question:
//
//   - AgentQuestion is what an agent's token reads (ask, read, wait,
//     cancel, the MCP door). It is an allowlist (law 11): it holds what
//     the agent wrote itself and what the server made (ids, states,
//     times, verdicts, hashes), and nothing a person wrote or chose (an
//     answer, a reason, a note, edited arguments, a display name, a
//     platform id). Those reach the agent only inside the fenced resume.
//     A field added to core.Question reaches no agent until someone adds
//     it here on purpose.
//   - Question is what operators and observers read: the whole record,
//     people's words included, since they are people reading people.
//
// Where both views have a field, it has the same name and meaning, so a
// reader that decodes the agent's view into Question gets the agent's
// fields right and the rest empty.

// Asked is what both views show alike of the ask itself: the agent's
// own words and the ids and labels it asked under.
type Asked struct {
	ID            core.QuestionID    `json:"id"`
	Kind          core.Kind          `json:"kind"`
	Agent         core.AgentID       `json:"agent"`
	RunID         core.RunID         `json:"run_id"`
	ToolCallID    string             `json:"tool_call_id,omitempty"`
	Labels        core.Labels        `json:"labels,omitzero"`
	Text          string             `json:"question"`
	Context       string             `json:"context,omitempty"`
	Reversibility core.Reversibility `json:"reversibility"`
	Route         string             `json:"route"`
}

// Schedule is what both views show alike of the question's clock and
// what it takes to close: server-made, or the agent's own choice.
type Schedule struct {
	CreatedAt  time.Time          `json:"created_at"`
	Deadline   time.Time          `json:"deadline"`
	Timeout    core.Duration      `json:"timeout"`
	OnTimeout  core.TimeoutPolicy `json:"on_timeout"`
	MaxReasks  int                `json:"max_reasks,omitempty"`
	Renotified int                `json:"renotified,omitempty"`
	Quorum     int                `json:"quorum,omitempty"`
}

func askedOf(q *core.Question) Asked {
	return Asked{ID: q.ID, Kind: q.Kind, Agent: q.Agent, RunID: q.RunID, ToolCallID: q.ToolCallID,
		Labels: q.Labels, Text: q.Text, Context: q.Context, Reversibility: q.Reversibility, Route: q.Route}
}

func scheduleOf(q *core.Question) Schedule {
	return Schedule{CreatedAt: q.CreatedAt, Deadline: q.Deadline, Timeout: q.Timeout, OnTimeout: q.OnTimeout,
		MaxReasks: q.MaxReasks, Renotified: q.Renotified, Quorum: q.Quorum}
}

// AgentQuestion is a question as its asking agent may see it.
type AgentQuestion struct {
	Asked

	Options []AgentOption   `json:"options,omitempty"`
	Items   []AgentFormItem `json:"items,omitempty"`
	Call    *AgentToolCall  `json:"call,omitempty"`
	Calls   []AgentCall     `json:"calls,omitempty"`

	Schedule
	// Votes are the votes so far on a question with a quorum: which
	// choice, when, on which surface; never who or why.
	Votes []AgentVote `json:"votes,omitempty"`

	State core.State `json:"state"`
	// Answers are a form's answered items, or a batch's decided calls:
	// which option, when, on which surface; free text, reasons and edited
	// arguments are the resume's.
	Answers    []AgentAnswer    `json:"answers,omitempty"`
	Resolution *AgentResolution `json:"resolution,omitempty"`
}

// AgentOption is a decision's option, as the agent wrote it.
type AgentOption struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Writeup     string `json:"writeup"`
	Recommended bool   `json:"recommended,omitempty"`
}

// AgentFormItem is a form item, as the agent wrote it.
type AgentFormItem struct {
	ID       string            `json:"id"`
	Question string            `json:"question"`
	Options  []AgentFormOption `json:"options"`
}

// AgentFormOption is one choice of a form item, as the agent wrote it.
type AgentFormOption struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	Recommended bool   `json:"recommended,omitempty"`
}

// AgentToolCall is the gated call, as the agent asked for it.
type AgentToolCall struct {
	Tool            string          `json:"tool"`
	Arguments       json.RawMessage `json:"arguments"`
	ArgumentsSHA256 string          `json:"arguments_sha256"`
	Editable        *core.Editable  `json:"editable,omitempty"`
	// Standing is whether approvers may grant a standing approval with
	// it: the route's offer, fixed at the ask.
	Standing *core.StandingOffer `json:"standing,omitempty"`
}

// AgentCall is one call of a batch, as the agent asked for it.
type AgentCall struct {
	ToolCallID string `json:"tool_call_id"`
	AgentToolCall
}

// AgentVote is one vote, without the voter or their words.
type AgentVote struct {
	Choice  string       `json:"choice"`
	Surface core.Surface `json:"surface"`
	At      time.Time    `json:"at"`
}

// AgentAnswer is one answered form item or decided batch call.
type AgentAnswer struct {
	ItemID   string       `json:"item_id"`
	OptionID string       `json:"option_id,omitempty"`
	Surface  core.Surface `json:"surface"`
	At       time.Time    `json:"at"`
	// Edited, for a batch call approved with changed arguments: the hash
	// of the approved arguments (the arguments are in the call's result).
	Edited *AgentEdit `json:"edit,omitempty"`
	// StandingID is the standing approval that decided the call, if one
	// did.
	StandingID string `json:"standing_id,omitempty"`
}

// AgentEdit says that arguments were changed before approval, by their
// hashes only.
type AgentEdit struct {
	ArgumentsSHA256      string `json:"arguments_sha256"`
	AskedArgumentsSHA256 string `json:"asked_arguments_sha256"`
}

// AgentResolution is how the question closed, in server-made terms.
type AgentResolution struct {
	State core.State `json:"state"`
	At    time.Time  `json:"at"`
	// ClosedBy is who or what closed it: a person, a quorum, a standing
	// approval, the parts' own deciders, a timeout, a decline, a cancel,
	// the end of the run.
	ClosedBy core.Closer `json:"closed_by"`
	// Surface is where the closing act came from: system for the bridge
	// itself, and for a standing approval, which the bridge applied at
	// the ask (its granter acted earlier, elsewhere), or a batch such
	// approvals or policy rules decided whole at the ask.
	Surface  core.Surface `json:"surface"`
	OptionID string       `json:"option_id,omitempty"`
	Approved *bool        `json:"approved,omitempty"`
	// ArgumentsSHA256 is the hash of the arguments the verdict covers:
	// the approved ones when an approver edited them (Edit), as the
	// resume's arguments_sha256 says.
	ArgumentsSHA256 string     `json:"arguments_sha256,omitempty"`
	Edit            *AgentEdit `json:"edit,omitempty"`
	StandingID      string     `json:"standing_id,omitempty"`
	// Reason is kept only for the agent's own cancel: it wrote it.
	Reason string `json:"reason,omitempty"`
	// Away, on a timeout, is the span askbridge was not running in which
	// the deadline passed: nobody could answer then.
	Away *AgentDowntime `json:"away,omitempty"`
}

// AgentDowntime is a span askbridge was not running: from its last
// heartbeat to the boot after it.
type AgentDowntime struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
}

// AgentView is q as its asking agent may see it. It copies, field by
// field, only what AgentQuestion names.
func AgentView(q *core.Question) *AgentQuestion {
	if q == nil {
		return nil
	}
	v := &AgentQuestion{Asked: askedOf(q), Schedule: scheduleOf(q), State: q.State}
	for _, o := range q.Options {
		v.Options = append(v.Options, AgentOption{ID: o.ID, Title: o.Title, Writeup: o.Writeup, Recommended: o.Recommended})
	}
	for _, it := range q.Items {
		item := AgentFormItem{ID: it.ID, Question: it.Question, Options: []AgentFormOption{}}
		for _, o := range it.Options {
			item.Options = append(item.Options, AgentFormOption{ID: o.ID, Label: o.Label, Description: o.Description, Recommended: o.Recommended})
		}
		v.Items = append(v.Items, item)
	}
	if q.Call != nil {
		c := agentCall(*q.Call)
		v.Call = &c
	}
	for _, c := range q.Calls {
		v.Calls = append(v.Calls, AgentCall{ToolCallID: c.ToolCallID, AgentToolCall: agentCall(c.ToolCall)})
	}
	for _, vt := range q.CountedVotes() {
		v.Votes = append(v.Votes, AgentVote{Choice: vt.Choice, Surface: vt.Decider.Surface, At: vt.At})
	}
	for _, a := range q.Answers {
		// A part a standing approval or a rule decided reads as the
		// system's, as the resolution does: the grantor's own surface is
		// not the agent's to know.
		aa := AgentAnswer{ItemID: a.ItemID, OptionID: a.OptionID, Surface: a.Surface(), At: a.At, Edited: agentEdit(a.Edit)}
		if a.Standing != nil {
			aa.StandingID = a.Standing.ID
		}
		v.Answers = append(v.Answers, aa)
	}
	if r := q.Resolution; r != nil {
		ar := &AgentResolution{State: r.State, At: r.At, ClosedBy: core.CloserOf(q), Surface: core.ClosingSurface(q), OptionID: r.OptionID,
			ArgumentsSHA256: r.VerdictSHA256(), Edit: agentEdit(r.Edit)}
		if r.Approved != nil {
			approved := *r.Approved
			ar.Approved = &approved
		}
		if r.Standing != nil {
			ar.StandingID = r.Standing.ID
		}
		if r.Away != nil {
			ar.Away = &AgentDowntime{Since: r.Away.Since, Until: r.Away.Until}
		}
		if ar.ClosedBy == core.CloserAgentCancel && r.Decider.ID == string(q.Agent) {
			ar.Reason = r.Reason
		}
		v.Resolution = ar
	}
	return v
}

func agentCall(c core.ToolCall) AgentToolCall {
	out := AgentToolCall{Tool: c.Tool, Arguments: c.Arguments, ArgumentsSHA256: c.ArgumentsSHA256}
	if c.Editable != nil {
		e := core.Editable{All: c.Editable.All, Keys: append([]string(nil), c.Editable.Keys...)}
		out.Editable = &e
	}
	if c.Standing != nil {
		s := *c.Standing
		out.Standing = &s
	}
	return out
}

func agentEdit(e *core.ArgumentEdit) *AgentEdit {
	if e == nil {
		return nil
	}
	return &AgentEdit{ArgumentsSHA256: e.ArgumentsSHA256, AskedArgumentsSHA256: e.AskedArgumentsSHA256}
}

// Question is a question as operators and observers read it: the whole
// record, people's words and names included.
type Question struct {
	Asked

	Options []core.Option    `json:"options,omitempty"`
	Items   []core.FormItem  `json:"items,omitempty"`
	Call    *core.ToolCall   `json:"call,omitempty"`
	Calls   []core.BatchCall `json:"calls,omitempty"`

	Schedule
	Votes []core.Vote `json:"votes,omitempty"`
	// Counted is how an open question's votes count under the
	// configuration in force: the votes of people a reload took off its
	// route, by key, and how many people may still decide it where that
	// is known (fewer than its quorum: it cannot be reached). A closed
	// question's count is its resolution's.
	Counted *core.VoteCount `json:"counted,omitempty"`

	State      core.State        `json:"state"`
	Answers    []core.ItemAnswer `json:"answers,omitempty"`
	Messages   []core.MessageRef `json:"messages,omitempty"`
	Resolution *core.Resolution  `json:"resolution,omitempty"`
	// Rule is the route's policy rule that decided the ask, when one did:
	// allowed or denied it at once, or shaped how it was asked.
	Rule *core.RuleUse `json:"rule,omitempty"`
}

// OperatorView is q as operators and observers read it. A person's own
// address on a one-way door (an email address, an ntfy topic, which works
// as a password: subscribed to, it brings that person's signed links) is
// in none of it: a card's room and delivery key, and a decider's id, on
// such a surface read as the door alone (core.RecipientLabel), as the
// console and the event log name them.
func OperatorView(q *core.Question) *Question {
	if q == nil {
		return nil
	}
	v := &Question{
		Asked: askedOf(q), Options: q.Options, Items: q.Items, Call: q.Call, Calls: q.Calls,
		Schedule: scheduleOf(q), Votes: q.Votes, Counted: q.Counted,
		State: q.State, Answers: q.Answers, Messages: q.Messages, Resolution: q.Resolution, Rule: q.Rule,
	}
	hideAddresses(v)
	return v
}

// OperatorViews is each of qs as OperatorView makes it, [] rather than
// null for none.
func OperatorViews(qs []*core.Question) []*Question {
	out := make([]*Question, len(qs))
	for i, q := range qs {
		out[i] = OperatorView(q)
	}
	return out
}

// hideAddresses replaces, in v's own copies, every personal address (a
// room on a surface whose rooms are people, core.Surface.RoomIsPersonal)
// by the door's label.
func hideAddresses(v *Question) {
	personal := func(d core.Decider) bool { return d.Surface.RoomIsPersonal() && d.ID != "" }
	grantor := func(u *core.StandingUse) *core.StandingUse {
		if u == nil || !personal(u.GrantedBy) {
			return u
		}
		c := *u
		c.GrantedBy = core.ShownDecider(c.GrantedBy)
		return &c
	}
	if slices.ContainsFunc(v.Messages, func(m core.MessageRef) bool { return m.Surface.RoomIsPersonal() }) {
		v.Messages = slices.Clone(v.Messages)
		for i := range v.Messages {
			if m := &v.Messages[i]; m.Surface.RoomIsPersonal() {
				m.Room, m.Delivery = core.RecipientLabel(m.Surface), ""
			}
		}
	}
	if slices.ContainsFunc(v.Answers, func(a core.ItemAnswer) bool {
		return personal(a.Decider) || a.Standing != nil && personal(a.Standing.GrantedBy)
	}) {
		v.Answers = slices.Clone(v.Answers)
		for i := range v.Answers {
			a := &v.Answers[i]
			a.Decider, a.Standing = core.ShownDecider(a.Decider), grantor(a.Standing)
		}
	}
	// A vote's key names an account as "<surface>:<id>", on its own vote,
	// in a later vote's list of those it discounted and in the counts of
	// those that no longer count. A one-way door's key holds the person's
	// address, so it is replaced, everywhere in the view alike, by
	// "<surface>:hidden-<n>": the view's tally (core.TallyOf over it, as
	// the CLI reads it) still matches each vote with its count.
	hidden := map[string]string{}
	hide := func(k string) string {
		sf, _, _ := strings.Cut(k, ":")
		if !core.Surface(sf).RoomIsPersonal() {
			return k // a chat account's, or a person's ("person:<name>")
		}
		h, ok := hidden[k]
		if !ok {
			h = sf + ":hidden-" + strconv.Itoa(len(hidden)+1)
			hidden[k] = h
		}
		return h
	}
	hides := func(keys ...string) bool {
		return slices.ContainsFunc(keys, func(k string) bool { return hide(k) != k })
	}
	hideKeys := func(keys []string) []string {
		if !hides(keys...) {
			return keys
		}
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = hide(k)
		}
		return out
	}
	if slices.ContainsFunc(v.Votes, func(vt core.Vote) bool { return personal(vt.Decider) || hides(vt.Key) || hides(vt.Discounted...) }) {
		v.Votes = slices.Clone(v.Votes)
		for i := range v.Votes {
			vt := &v.Votes[i]
			vt.Decider, vt.Key, vt.Discounted = core.ShownDecider(vt.Decider), hide(vt.Key), hideKeys(vt.Discounted)
		}
	}
	hideCount := func(c *core.VoteCount) *core.VoteCount {
		if c == nil || !hides(c.Uncounted...) {
			return c
		}
		cc := *c
		cc.Uncounted = hideKeys(c.Uncounted)
		return &cc
	}
	v.Counted = hideCount(v.Counted)
	if r := v.Resolution; r != nil {
		if c := hideCount(r.Counted); c != r.Counted || personal(r.Decider) || r.Standing != nil && personal(r.Standing.GrantedBy) {
			rc := *r
			rc.Counted, rc.Decider, rc.Standing = c, core.ShownDecider(rc.Decider), grantor(rc.Standing)
			v.Resolution = &rc
		}
	}
}

// ShownStanding is st as the API shows it: who granted it from a one-way
// door named by the door alone (core.ShownDecider).
func ShownStanding(st Standing) Standing {
	st.GrantedBy = core.ShownDecider(st.GrantedBy)
	return st
}

// Open reports whether the question can still change.
func (q *Question) Open() bool { return q.State == core.StateOpen }

// IsBatch reports whether the question is the approval of a batch of
// calls.
func (q *Question) IsBatch() bool { return len(q.Calls) > 0 }

// Open reports whether the question can still change.
func (q *AgentQuestion) Open() bool { return q.State == core.StateOpen }
