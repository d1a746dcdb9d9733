package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// DenyPolicy says how denies count on an approval with a quorum.
type DenyPolicy string

const (
	// DenyVeto (the default): one deny closes the question denied.
	DenyVeto DenyPolicy = "veto"
	// DenyCount: denies are counted like approvals, and the question
	// closes denied once approval can no longer reach the quorum.
	DenyCount DenyPolicy = "count"
)

func (p DenyPolicy) String() string { return string(p) }

// ParseDenyPolicy maps "" to the default, veto.
func ParseDenyPolicy(s string) (DenyPolicy, error) {
	switch DenyPolicy(s) {
	case "":
		return DenyVeto, nil
	case DenyVeto, DenyCount:
		return DenyPolicy(s), nil
	}
	return "", Errorf(CodeInvalid, "parse deny", "deny %q is not veto or count", s)
}

// MaxQuorum caps a quorum: more is a vote, not a sign-off.
const MaxQuorum = 100

// EventVoted records one person's vote on a question with a quorum that
// did not close it.
const EventVoted EventKind = "voted"

// Vote is one person's vote on a question with a quorum. Votes are kept
// per person (Key), each with their own words, and reach the agent fenced.
type Vote struct {
	// Key is who voted, once per person however many surfaces they
	// have: "person:<name>" for a configured person, else
	// "<surface>:<id>" for an account.
	Key string `json:"key"`
	// Choice is the option id: a decision's option, or ApproveOption /
	// DenyOption.
	Choice string `json:"choice"`
	// Text is the voter's reason or note, untrusted.
	Text    string    `json:"text,omitempty"`
	Decider Decider   `json:"decider"`
	At      time.Time `json:"at"`
	// Roles are the voter's roles that the question's routes let them in
	// by (a Slack user group, a Discord role, a token's role), kept so
	// that a later vote can check them against the routes in force.
	Roles []string `json:"roles,omitempty"`
	// Discounted are the keys of the earlier votes that did not count
	// when this one was cast: their voters were no longer among those
	// the question's routes let decide (a reload took them off). A vote
	// counts only while its voter may still decide, as a standing
	// approval covers only while its grantor may; the latest vote's list
	// is the tally's where the question carries no count of its own
	// (tally.go).
	Discounted []string `json:"discounted,omitempty"`
}

// SortVotes puts votes in the order they came (by time, to the
// millisecond stores keep; votes of the same instant by voter), the
// order stores return them in.
func SortVotes(vs []Vote) {
	slices.SortFunc(vs, func(a, b Vote) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
}

// VoteKey names who votes: the person, so their accounts on every
// surface are one vote, else the account. A token is one account on the
// API and on the console signed in with it (both name it by the token's
// name), so it is keyed as the API's there too: one credential is one
// vote of a quorum, from either door.
func VoteKey(d Decider) string {
	if d.Person != "" {
		return PersonPrefix + d.Person
	}
	if d.Surface == SurfaceConsole {
		return string(SurfaceAPI) + ":" + d.ID
	}
	return string(d.Surface) + ":" + d.ID
}

// voterKeys are the keys, other than its own, a vote by d may have been
// counted under before: each account of d's person, keyed as an account
// (a vote cast from it before a reload tied it to the person). A token's
// console key of before VoteKey keyed both doors alike needs none:
// sameVoter keys each vote's account afresh.
func (s *Service) voterKeys(d Decider) []string {
	if d.Person == "" {
		return nil
	}
	var out []string
	for _, a := range s.accounts(d.Person) {
		out = append(out, VoteKey(Decider{Surface: a.Surface, ID: a.ID})) // an account's key
	}
	return out
}

// sameVoter reports whether prev was cast by the voter of key, also known
// by the keys also (Transition.VoterKeys): by its own key, or by the
// account it came from, so a vote keyed by a person's name a reload has
// since changed, or by a person who no longer holds that account, still
// counts against whoever votes from that account, or as its person now.
func sameVoter(prev Vote, key string, also []string) bool {
	if prev.Key == key || slices.Contains(also, prev.Key) {
		return true
	}
	if prev.Decider.ID == "" {
		return false
	}
	from := VoteKey(Decider{Surface: prev.Decider.Surface, ID: prev.Decider.ID})
	return from == key || slices.Contains(also, from)
}

// VoteOf is d's vote on q, found as the chokepoint finds it to refuse a
// second (sameVoter, with d identified as configured now): for a surface
// to show a voter what they voted instead of offering the vote again.
func (s *Service) VoteOf(q *Question, d Decider) (Vote, bool) {
	d = s.identify(d).Decider
	key, also := VoteKey(d), s.voterKeys(d)
	for _, v := range q.Votes {
		if sameVoter(v, key, also) {
			return v, true
		}
	}
	return Vote{}, false
}

// AlreadyCountedMessage is what a second vote by the same person is told.
const AlreadyCountedMessage = "Your vote on this question already counted: each person votes once, from whichever surface."

// AlreadyCounted is the error a store returns for a vote by someone whose
// vote it already holds, and the chokepoint for one it sees first.
func AlreadyCounted(op string) error {
	return conflictOf(errDecidedFirst, op, "%s", AlreadyCountedMessage)
}

// alreadyCounted reports whether err is AlreadyCounted's: a store says so
// by its message, the one conflict of a transition that is not a part
// decided first.
func alreadyCounted(err error) bool {
	return ErrorCode(err) == CodeConflict && ErrorMessage(err) == AlreadyCountedMessage
}

// checkQuorum checks a route's quorum policy against its people: a count
// policy needs to know how many may vote, so its deciders must be people.
func checkQuorum(r Route) error {
	if _, err := ParseDenyPolicy(string(r.Deny)); err != nil {
		return fmt.Errorf("route %q: deny %q is not veto or count", r.Name, r.Deny)
	}
	if r.Quorum < 0 || r.Quorum > MaxQuorum {
		return fmt.Errorf("route %q: quorum must be between 1 and %d", r.Name, MaxQuorum)
	}
	if r.MaxQuorum < 0 || r.MaxQuorum > MaxQuorum || (r.MaxQuorum > 0 && r.MaxQuorum < r.quorum()) {
		return fmt.Errorf("route %q: max_quorum must be between quorum and %d", r.Name, MaxQuorum)
	}
	if n, ok := r.voters(); ok && max(r.quorum(), r.MaxQuorum) > n {
		return fmt.Errorf("route %q: a quorum of %d, but only %d people may decide", r.Name, max(r.quorum(), r.MaxQuorum), n)
	}
	if r.Deny == DenyCount {
		if _, ok := r.voters(); !ok {
			return fmt.Errorf("route %q: deny count needs the route's deciders to be people alone (routes.%s.people), to know how many may vote", r.Name, r.Name)
		}
	}
	return nil
}

// quorumRange is the least and the most quorum an ask on r may have:
// the route's own, up to its max_quorum or, on a route of people alone,
// all of them.
func (r Route) quorumRange() (least, most int) {
	least = r.quorum()
	most = max(r.MaxQuorum, least)
	if v, ok := r.voters(); ok && r.MaxQuorum == 0 {
		most = v
	}
	return least, most
}

// checkRuleQuorums checks each rule's quorum against the route it asks
// on (its own, or the one it names), as every ask it shapes would be:
// a quorum outside that range would refuse every call the rule matches.
func checkRuleQuorums(routes map[string]Route, name string) error {
	for i, rule := range routes[name].Rules {
		if rule.Quorum == 0 {
			continue
		}
		on := routes[name]
		if rule.Route != "" {
			on = routes[rule.Route]
		}
		if least, most := on.quorumRange(); rule.Quorum < least || rule.Quorum > most {
			return &RuleError{Route: name, Index: i, Field: "quorum", Spot: rule.spot(),
				Msg: fmt.Sprintf("%d is outside what route %q allows: %d to %d, so every call the rule matches would be refused", rule.Quorum, on.Name, least, most)}
		}
	}
	return nil
}

// quorum is the route's quorum, 1 when unset.
func (r Route) quorum() int { return max(r.Quorum, 1) }

// letsNobodyIn reports whether r names nobody who may decide: no
// accounts, roles or "*", and no people (those its people entries named
// are gone).
func (r Route) letsNobodyIn() bool {
	for _, entries := range r.Deciders {
		if len(entries) > 0 {
			return false
		}
	}
	return len(r.persons) == 0
}

// voters is how many people may decide on r, when that is known: its
// deciders are people alone (no accounts, roles or "*").
func (r Route) voters() (int, bool) {
	for _, entries := range r.Deciders {
		if len(entries) > 0 {
			return 0, false
		}
	}
	if len(r.persons) == 0 {
		return 0, false
	}
	return len(r.persons), true
}

// quorumOf is the quorum a new question takes: the ask's, within what the
// route allows (at least its quorum, at most max_quorum or, on a route of
// people, how many they are), else the route's. Only the kinds whose
// home takes votes (kind.votes: decisions, approvals of one call) are
// voted on; a batch, which one person decides call by call, is refused
// where the route needs more than one.
func (s *Service) quorumOf(in AskInput, route Route) (int, error) {
	const op = "ask"
	n, most := route.quorumRange()
	if in.Quorum != 0 {
		if in.Quorum < n || in.Quorum > most {
			return 0, Errorf(CodeInvalid, op, "quorum %d is outside what route %q allows: %d to %d", in.Quorum, route.Name, n, most)
		}
		n = in.Quorum
	}
	if n > 1 && in.shape() == ShapeBatch {
		// A batch is decided call by call, by one person each; taking it
		// on a route that needs several would let one person approve
		// what the route says several must, batching a call with any
		// other. So it fails closed: the calls are asked one by one.
		return 0, Errorf(CodeInvalid, op, "route %q needs %d people to agree on an approval, and a batch is decided by one: ask for its calls one at a time", route.Name, n)
	}
	if n > 1 && !homes[in.shape()].votes {
		if in.Quorum > 1 {
			return 0, Errorf(CodeInvalid, op, "only approvals of one call and decisions take a quorum, not a %s", in.shape())
		}
		n = 1 // the route's quorum applies to the kinds that vote (kind.votes)
	}
	if n <= 1 {
		return 0, nil
	}
	return n, nil
}

// voteTransition turns an answer to a question with a quorum into one
// vote. The transition carries the resolution this vote closes the
// question with if it is the one that reaches the threshold for its
// choice, or, on an approval whose denies already reach theirs (a reload
// lowered it), the denial any vote now closes it with; Next counts
// against the question as stored and decides (law 10).
func (s *Service) voteTransition(q *Question, in AnswerInput, res *Resolution, now time.Time) (Transition, error) {
	const op = "answer"
	d := publicDecider(in.Decider)
	v := Vote{Key: VoteKey(d), Choice: in.OptionID, Text: strings.TrimSpace(in.Text), Decider: d, At: now}
	routes := s.decidingRoutes(q)
	for _, r := range routes {
		for _, role := range r.LetIn(in.Decider) {
			if !slices.Contains(v.Roles, role) {
				v.Roles = append(v.Roles, role)
			}
		}
	}
	count := q.Counted // as the chokepoint read it for this change (changeOf)
	if count == nil {
		count = s.voteCount(q)
	}
	also, denies, off := s.voterKeys(d), 0, count.Uncounted
	for _, prev := range q.Votes {
		switch {
		case sameVoter(prev, v.Key, also):
			return Transition{}, AlreadyCounted(op)
		case slices.Contains(off, prev.Key):
			v.Discounted = append(v.Discounted, prev.Key)
		case prev.Choice == DenyOption:
			denies++
		}
	}
	needed, closing, reason := q.Quorum, *res, ""
	if q.Kind == KindApproval {
		switch denyAt := s.denyThreshold(q); {
		case v.Choice == DenyOption:
			needed = denyAt
		case denies >= denyAt:
			// The denies in close it already: a reload since the last of
			// them took people off the routes, and approval can no longer
			// reach the quorum. This vote closes it denied, as the next
			// deny would; one may never come (nobody left to cast it),
			// and it would wait out its deadline meanwhile.
			needed = 1
			denied := false
			closing.Approved = &denied
			reason = fmt.Sprintf("denied: after %d %s, approval can no longer reach the quorum of %d among those who may decide now",
				denies, Plural(denies, "deny", "denies"), q.Quorum)
		}
	}
	// json.Marshal, not %q: Go quotes some runes (tag characters, as in
	// flag emoji) in an escape JSON refuses, and both stores refused the vote.
	payload, err := json.Marshal(struct {
		Choice string `json:"choice"`
		Needed int    `json:"needed"`
	}{v.Choice, needed})
	if err != nil {
		return Transition{}, Internal(op, err)
	}
	// The closing vote's words are its vote's, kept with every other
	// vote, not the resolution's: the resume lists them all.
	r := closing
	r.Reason, r.ClosedBy = "", CloserQuorum
	return Transition{
		Vote:       &v,
		VoterKeys:  also,
		Needed:     needed,
		Resolution: &r,
		Event:      s.closeEvent(q, &r, reason),
		VoteEvent: Event{QuestionID: q.ID, RunID: q.RunID, At: now, Kind: EventVoted,
			Actor: s.pseudonym(d), Surface: d.Surface, Payload: payload},
	}, nil
}

// voterAllowed reports whether the voter of v may still decide q: their
// account identified afresh, with the roles the routes let them in by
// when they voted (Vote.Roles), against the routes in force.
func (s *Service) voterAllowed(q *Question, v Vote) bool {
	d := s.identify(v.Decider) // as grantorAllowed identifies a grantor
	d.Roles = v.Roles
	return s.allowed(q, d)
}

// ClosingChoice is the choice q closed with when votes closed it: for an
// approval ApproveOption or DenyOption, else the option chosen.
func ClosingChoice(q *Question) string {
	r := q.Resolution
	switch {
	case r == nil:
		return ""
	case q.Kind != KindApproval:
		return r.OptionID
	case r.Approved != nil && *r.Approved:
		return ApproveOption
	}
	return DenyOption
}

// denyThreshold is how many denies close an approval denied: one under
// veto; under count, as many as leave fewer possible approvals than the
// quorum.
//
// Once the question escalated, the escalation route's people vote too,
// so they count among those who could still approve; an escalation
// route that lists accounts or roles cannot be counted, and one deny
// closes it (towards the safe side).
func (s *Service) denyThreshold(q *Question) int {
	routes := s.decidingRoutes(q)
	if len(routes) == 0 || routes[0].Deny != DenyCount {
		return 1
	}
	n, ok := s.peopleDeciding(q, false)
	if !ok {
		return 1 // checked at start for the route asked; fail towards the safe side
	}
	return max(n-q.Quorum+1, 1)
}

// peopleDeciding is how many people may decide q now, across the routes
// deciding it (decidingRoutes), when that is known: each route lets in
// people alone, or, with empty, nobody at all (no people left in its
// groups, no accounts, roles or "*"; or the route gone).
func (s *Service) peopleDeciding(q *Question, empty bool) (int, bool) {
	routes := s.decidingRoutes(q)
	if len(routes) == 0 {
		return 0, empty
	}
	voters := map[string]bool{}
	for _, r := range routes {
		if _, ok := r.voters(); !ok && !(empty && r.letsNobodyIn()) {
			return 0, false
		}
		for p := range r.persons {
			voters[p] = true
		}
	}
	return len(voters), true
}

// recordRefusedVote records a second vote by the same person as refused,
// like every attempt that changed nothing.
func (s *Service) recordRefusedVote(ctx context.Context, id QuestionID, d Decider, err error) {
	if !alreadyCounted(err) {
		return
	}
	if q, gerr := s.store.Get(ctx, id); gerr == nil {
		s.refuse(ctx, q, d, "vote already counted")
	}
}
