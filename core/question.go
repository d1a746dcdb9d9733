package core

import (
	"encoding/json"
	"iter"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/fence"
)

// Question is one parked question and, once closed, its outcome.
type Question struct {
	ID         QuestionID `json:"id"`
	Kind       Kind       `json:"kind"`
	Agent      AgentID    `json:"agent"`
	RunID      RunID      `json:"run_id"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// HostPrompt: the question is its agent host's own permission prompt
	// (AskInput.HostPrompt). The agent's MCP host asked it, so it may not
	// answer it (Service.allowed): the model could, with the agent's
	// token, approve its own call.
	HostPrompt    bool          `json:"host_prompt,omitempty"`
	Labels        Labels        `json:"labels,omitzero"`
	Text          string        `json:"question"`
	Context       string        `json:"context,omitempty"`
	Reversibility Reversibility `json:"reversibility"`
	Route         string        `json:"route"`
	// AskedRoute is the route as it was configured when the question was
	// asked (its JSON), less its rules, which act only at the ask. A
	// reload may change or remove the route; the question is still
	// posted, reminded, escalated and answered by this copy (RouteOf), on
	// every replica and after a restart. Questions stored before it
	// existed have none and follow the route of their name.
	AskedRoute json.RawMessage `json:"asked_route,omitempty"`

	Options []Option    `json:"options,omitempty"` // decision
	Items   []FormItem  `json:"items,omitempty"`   // form
	Call    *ToolCall   `json:"call,omitempty"`    // approval
	Calls   []BatchCall `json:"calls,omitempty"`   // approval of a batch of tool calls (batch.go)

	CreatedAt time.Time     `json:"created_at"`
	Deadline  time.Time     `json:"deadline"`
	Timeout   Duration      `json:"timeout"` // how far each escalation or re-ask extends the deadline
	OnTimeout TimeoutPolicy `json:"on_timeout"`
	MaxReasks int           `json:"max_reasks,omitempty"`
	// Renotified counts escalations and re-asks so far; the timeout policy
	// reads it to know when to stop extending.
	Renotified int `json:"renotified,omitempty"`
	// Quorum, above 1, is how many different people must agree; Votes
	// are theirs so far, one per person (quorum.go).
	Quorum int    `json:"quorum,omitempty"`
	Votes  []Vote `json:"votes,omitempty"`
	// Counted is how its votes count under the configuration in force
	// as the Service read them when it handed the question out (tally.go):
	// never stored, and nil on a question a store read alone.
	Counted *VoteCount `json:"-"`

	State State `json:"state"`
	// Answers holds the form items answered so far, in item order. They are
	// stored one by one, so a half-answered form survives a restart.
	Answers []ItemAnswer `json:"answers,omitempty"`
	// Messages are the cards posted for this question, so they can be
	// edited after a restart and on any replica.
	Messages   []MessageRef `json:"messages,omitempty"`
	Resolution *Resolution  `json:"resolution,omitempty"`
	// Idempotency is set when the ask can be repeated safely: a repeat
	// gets this question back instead of parking a second one.
	Idempotency *Idempotency `json:"idempotency,omitempty"`
	// Rule is the route's policy rule that decided the ask, when one did:
	// shaped it (ask), or closed it at once (allow, deny).
	Rule *RuleUse `json:"rule,omitempty"`
	// TraceParent is the W3C traceparent of the ask's span, set only
	// while tracing is on (trace.go): whichever replica later delivers,
	// answers or closes the question makes its spans children of it, so
	// the question's life is one trace. Both stores keep it in the
	// question's document, written once at the ask.
	TraceParent string `json:"traceparent,omitempty"`
	// CallbackURL, when set, is told when the question closes (its own
	// from the ask, or its route's; callback.go).
	CallbackURL string `json:"callback_url,omitempty"`
	// Version counts the changes stored so far: every change a store
	// makes to the question moves it on by one, and a Change is written
	// only while the question is still at the version it was computed
	// from (Questions.Commit). Stores keep it beside the record; it is
	// never part of the question's JSON.
	Version int64 `json:"-"`
}

// Labels are free-form tags shown on cards and filterable by operators.
type Labels struct {
	Project string `json:"project,omitempty"`
	Task    string `json:"task,omitempty"`
}

// Option is one choice of a decision.
type Option struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Writeup     string `json:"writeup"` // the trade-offs; what the agent resumes with when picked
	Recommended bool   `json:"recommended,omitempty"`
}

// FormItem is one multiple-choice question of a form. Every item also takes
// free text, for when no option fits.
type FormItem struct {
	ID       string       `json:"id"`
	Question string       `json:"question"`
	Options  []FormOption `json:"options"`
}

// FormOption is one choice of a form item.
type FormOption struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	Recommended bool   `json:"recommended,omitempty"`
}

// ToolCall is the gated call an approval is about. ArgumentsSHA256 is the
// hash of the canonical arguments (HashArguments); it is echoed in the resolution so the
// agent can check that exactly these arguments were approved.
type ToolCall struct {
	Tool            string          `json:"tool"`
	Arguments       json.RawMessage `json:"arguments"`
	ArgumentsSHA256 string          `json:"arguments_sha256"`
	// Editable says which arguments an approver may change before
	// approving (edit.go); nil: none.
	Editable *Editable `json:"editable,omitempty"`
	// Standing is the standing approval its approvers may grant with it
	// (standing.go), fixed at the ask; nil: none.
	Standing *StandingOffer `json:"standing,omitempty"`
}

// ItemAnswer is one answered form item: an option, or free text. A
// batch's decided calls are recorded the same way (batch.go): ItemID is
// the tool call id, OptionID approve or deny, Text the reason, and Edit
// the arguments as approved when they were changed.
type ItemAnswer struct {
	ItemID   string        `json:"item_id"`
	OptionID string        `json:"option_id,omitempty"`
	Text     string        `json:"text,omitempty"`
	Edit     *ArgumentEdit `json:"edit,omitempty"`
	// Standing is set on a call a standing approval decided at the ask.
	Standing *StandingUse `json:"standing,omitempty"`
	// Policy is set on a call a route's policy rule decided at the ask
	// (rules.go); Text is then the rule's reason.
	Policy  *RuleUse  `json:"policy,omitempty"`
	Decider Decider   `json:"decider"`
	At      time.Time `json:"at"`
}

// Decider is a person (or the bridge) acting on a question. ID is the
// platform's own id (a Slack user id, a Telegram user id, an API token's
// name); Name is their display name, untrusted and fenced on the way out.
// Roles are the platform roles or groups they hold at the time of the act;
// they are checked, not stored. Person is the configured person the
// account belongs to; core sets it (identify), whatever a caller passed.
type Decider struct {
	Surface Surface  `json:"surface"`
	ID      string   `json:"id,omitempty"`
	Name    string   `json:"name,omitempty"`
	Person  string   `json:"person,omitempty"`
	Roles   []string `json:"-"`
	// Outsider, set by a door whose platform lets people of another
	// organisation act in a shared place (a Slack Connect channel),
	// keeps a route's "*" from letting them in: "*" means the
	// deployment's own members. A route that names them still does.
	Outsider bool `json:"-"`
}

// DeciderLabel names who acted, for people: the display name, else the
// id; but never a one-way door's recipient (an email address, an ntfy
// topic, which works as a password: Surface.RoomIsPersonal), which is
// named by its surface alone.
func DeciderLabel(d Decider) string {
	switch {
	case d.Surface == SurfaceSystem:
		return "askbridge"
	case d.Name != "":
		return d.Name
	case d.Surface.RoomIsPersonal() && d.ID != "":
		return RecipientLabel(d.Surface)
	case d.ID != "":
		return d.ID
	}
	return "someone"
}

// RecipientLabel names a one-way door's recipient by the door alone
// ("an email recipient"), where their address must not be shown.
func RecipientLabel(sf Surface) string {
	if sf == SurfaceEmail {
		return "an email recipient"
	}
	return "an " + string(sf) + " subscriber"
}

// ShownDecider is d as every token of the API may read it: a one-way
// door's recipient by the door alone (RecipientLabel), never by their
// address or topic; anyone else as they are.
func ShownDecider(d Decider) Decider {
	if d.Surface.RoomIsPersonal() && d.ID != "" {
		d.ID = RecipientLabel(d.Surface)
	}
	return d
}

// System is the decider for what the bridge does on its own: timeouts,
// expiry at the end of a run.
var System = Decider{Surface: SurfaceSystem, ID: "askbridge", Name: "askbridge"}

// Resolution is the one recorded outcome of a closed question.
type Resolution struct {
	State State `json:"state"`
	// ClosedBy is who or what closed the question (closer.go), set by
	// whoever built the closing transition. Records stored before it
	// existed have none: read it with CloserOf, never directly.
	ClosedBy Closer    `json:"closed_by,omitempty"`
	Decider  Decider   `json:"decider"`
	At       time.Time `json:"at"`
	// Answer is the clarification's text or the chosen option's write-up.
	Answer   string `json:"answer,omitempty"`
	OptionID string `json:"option_id,omitempty"`
	// Approved is set for an approval: true for approve, false for deny.
	Approved *bool  `json:"approved,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// ArgumentsSHA256 echoes the approval's argument hash.
	ArgumentsSHA256 string `json:"arguments_sha256,omitempty"`
	// Edit is set when the approver changed the arguments before
	// approving (edit.go): the call is approved with Edit.Arguments only.
	Edit *ArgumentEdit `json:"edit,omitempty"`
	// Standing is set when a standing approval closed the question at
	// once (standing.go).
	Standing *StandingUse `json:"standing,omitempty"`
	// Policy is set when a route's policy rule closed the question at the
	// ask (CloserPolicy; rules.go): which rule.
	Policy *RuleUse `json:"policy,omitempty"`
	// Grants is the standing approval the approve that closed the question
	// asked for along with it (standing.go), recorded in the close itself
	// so that whoever reads the close sees it at once: a host that
	// remembers approvals is told to (adapters/hooks). Whether it was
	// stored shows in the standing_granted event.
	Grants *StandingRequest `json:"grants_standing,omitempty"`
	// Away is set on a timeout whose deadline passed while askbridge was
	// not running (away.go): nobody could have answered then, and its
	// card and resume say so.
	Away *Downtime `json:"away,omitempty"`
	// Counted is how the votes of a question with a quorum counted at
	// its close (tally.go): a reload after it changes no closed record.
	Counted *VoteCount `json:"counted,omitempty"`
}

// MessageRef is a card posted on a chat surface: enough to edit it later.
type MessageRef struct {
	Surface Surface `json:"surface"`
	Room    string  `json:"room"` // Slack channel, Discord channel, Telegram chat id
	ID      string  `json:"id"`   // Slack ts, Discord message id, Telegram message id
	// Delivery is the key of the delivery that posted it; a second card
	// for the same key is a recognisable repeat (law 4).
	Delivery string `json:"delivery"`
	// Kind is what the card was posted as (DeliverPost, or
	// DeliverEscalate in an escalation route's room), so every later
	// edit keeps the card's markers.
	Kind DeliveryKind `json:"kind,omitempty"`
	// Repeat marks a card posted again after an earlier attempt that may
	// have left an unrecorded copy in the room; the card says so.
	Repeat bool      `json:"repeat,omitempty"`
	At     time.Time `json:"at"`
}

// Run is the run the question was asked in.
func (q *Question) Run() Run { return Run{Agent: q.Agent, ID: q.RunID} }

// Open reports whether the question can still change.
func (q *Question) Open() bool { return q.State == StateOpen }

// OpenFor is how long from now q can stay open at the most: to its
// deadline, moved on by each re-ask it has left and the escalation still
// to come. What must last as long as q may be open (a reminder's claim,
// a host's decline of its form) is kept at least this long.
func (q *Question) OpenFor(now time.Time) time.Duration {
	more := time.Duration(max(q.MaxReasks-q.Renotified, 0)+1) * time.Duration(q.Timeout)
	return max(q.Deadline.Sub(now), 0) + more
}

// Declinable reports whether one person may decline q: it is open, no
// policy rule decides it, and it needs no more than one person. A
// question that needs several people is theirs to vote on: one decline
// would close a sign-off of several as the agent's own call. Cards and
// the console offer Decline only where this holds; DeclineShown checks
// it again.
func (q *Question) Declinable() bool {
	return q.Open() && !q.Rule.decides() && q.Quorum <= 1
}

// Item returns the form item with the given id.
func (q *Question) Item(id string) (FormItem, bool) {
	for _, it := range q.Items {
		if it.ID == id {
			return it, true
		}
	}
	return FormItem{}, false
}

// Shown is what an answer to the item reads as to people: the label of
// the option chosen, or else the free text given.
func (it FormItem) Shown(optionID, text string) string {
	for _, o := range it.Options {
		if o.ID == optionID {
			return o.Label
		}
	}
	return text
}

// Option returns the decision option with the given id.
func (q *Question) Option(id string) (Option, bool) {
	for _, o := range q.Options {
		if o.ID == id {
			return o, true
		}
	}
	return Option{}, false
}

// Answered returns the answer already recorded for a form item.
func (q *Question) Answered(itemID string) (ItemAnswer, bool) {
	for _, a := range q.Answers {
		if a.ItemID == itemID {
			return a, true
		}
	}
	return ItemAnswer{}, false
}

// ActedBy reports whether the account id on surface has voted on q or
// answered a part of it: a reminder to that account would only repeat
// what it did. (A question it closed is no longer reminded at all.)
func (q *Question) ActedBy(surface Surface, id string) bool {
	for d := range q.actions() {
		if d.Surface == surface && d.ID == id {
			return true
		}
	}
	return false
}

// actions yields who acted on q without closing it: the decider of each
// part answered, then of each vote.
func (q *Question) actions() iter.Seq[Decider] {
	return func(yield func(Decider) bool) {
		for _, a := range q.Answers {
			if !yield(a.Decider) {
				return
			}
		}
		for _, v := range q.Votes {
			if !yield(v.Decider) {
				return
			}
		}
	}
}

// Normalize fills what a stored record may lack, so that readers never
// guess: a record without a reversibility reads as Unclassified.
func (q *Question) Normalize() {
	if q.Reversibility == "" {
		q.Reversibility = Unclassified
	}
}

// Caps on sizes. They keep cards within every platform's limits once cut
// and keep a single question from filling the store.
const (
	MaxIDLen        = 128 // agent, run id, tool call id, option and item ids, labels, route
	MaxTextLen      = 4000
	MaxContextLen   = 8000
	MaxTitleLen     = 150
	MaxWriteupLen   = 2000
	MaxAnswerLen    = 8000
	MaxReasonLen    = 2000
	MaxOptions      = 10 // decision options
	MaxItems        = 4
	MinItemOptions  = 2
	MaxItemOptions  = 4
	MaxToolLen      = 128
	MaxArgumentsLen = 16 << 10
	MaxReasks       = 10
)

func blank(s string) bool { return strings.TrimSpace(s) == "" }

func checkLen(op, field, s string, max int) error {
	if !utf8.ValidString(s) {
		return Errorf(CodeInvalid, op, "%s is not valid UTF-8", field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return Errorf(CodeInvalid, op, "%s is %d characters; the limit is %d", field, n, max)
	}
	return nil
}

// checkTool checks a tool's name: short enough, and with no character
// that renders as nothing (fence.IsInvisible), so "Ba\u200bsh" cannot
// pass for Bash on a card, a rule or a standing approval.
func checkTool(op, field, tool string) error {
	if err := checkLen(op, field, tool, MaxToolLen); err != nil {
		return err
	}
	if strings.ContainsFunc(tool, fence.IsInvisible) {
		return Errorf(CodeInvalid, op, "%s %q holds characters that render as nothing", field, Visible(tool))
	}
	return nil
}

// checkID checks an id as text: present if required, short enough, and
// with no control character but tab and line feed (checkText).
func checkID[S ~string](op, field string, s S, required bool) error {
	if required && blank(string(s)) {
		return Errorf(CodeInvalid, op, "%s is required", field)
	}
	return checkText(op, field, string(s), MaxIDLen, false)
}
