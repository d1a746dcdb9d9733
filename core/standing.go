package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// A standing approval is an approver's "don't ask again": later approval
// asks that match it (same agent, same run or within its window, same
// tool and route, and optionally the same argument hash) close at once as
// approved, without a card, and the agent's resume says a standing
// approval covered them. A hard-to-reverse ask is never covered, whatever
// the route says, and a route can forbid them outright.

// StandingScope is how far a standing approval reaches.
type StandingScope string

const (
	// StandingRun covers the rest of the run the approval was given in,
	// and ends with it.
	StandingRun StandingScope = "run"
	// StandingAgent covers every run of the agent for a window of hours
	// the route allows (Route.StandingHours).
	StandingAgent StandingScope = "agent"
)

// Event kinds of standing approvals. Each is appended with the id of the
// approval that granted it, so a question's log shows what its approval
// went on to cover.
const (
	EventStandingGranted EventKind = "standing_granted"
	EventStandingRevoked EventKind = "standing_revoked"
	EventStandingEnded   EventKind = "standing_ended" // its run ended
)

// MaxStandingHours caps a route's standing window.
const MaxStandingHours = 24 * 30

// Standing is one standing approval as stored.
type Standing struct {
	ID    string        `json:"id"`
	Scope StandingScope `json:"scope"`
	Agent AgentID       `json:"agent"`
	// RunID is the run a StandingRun covers; "" for StandingAgent.
	RunID RunID  `json:"run_id,omitempty"`
	Tool  string `json:"tool"`
	Route string `json:"route"`
	// ArgumentsSHA256, when set, limits it to calls with exactly these
	// arguments.
	ArgumentsSHA256 string `json:"arguments_sha256,omitempty"`
	// QuestionID is the approval that granted it.
	QuestionID QuestionID `json:"question_id"`
	GrantedBy  Decider    `json:"granted_by"`
	// GrantorRoles are the grantor's roles that the route's "role:"
	// entries let in when they granted it (a Slack user group, a Discord
	// role, a token's role), kept so that grantorAllowed can check them
	// against the route in force.
	GrantorRoles []string  `json:"grantor_roles,omitempty"`
	GrantedAt    time.Time `json:"granted_at"`
	// Until ends a StandingAgent's window; zero for StandingRun, which
	// ends with its run.
	Until time.Time `json:"until,omitzero"`
	// Dormant, in a list from Service.ListStandings, says why it covers
	// nothing now though it has not ended: its route is gone, or its
	// grantor may no longer decide on it (grantorAllowed). A reload can
	// wake it, so an operator who means it to stay off revokes it. It is
	// worked out at each listing, never stored.
	Dormant string `json:"dormant,omitempty"`
}

// Live reports whether s still covers asks at now.
func (s Standing) Live(now time.Time) bool { return s.Until.IsZero() || now.Before(s.Until) }

// RunKey is the Run.Key of the run a StandingRun covers; "" otherwise.
func (s Standing) RunKey() string {
	if s.Scope != StandingRun {
		return ""
	}
	return Run{Agent: s.Agent, ID: s.RunID}.Key()
}

// Standings is where standing approvals are kept. Lists hold only those
// live at now; stores may drop the rest.
type Standings interface {
	// PutStanding stores s (a new id). A StandingRun whose run is marked
	// ended (Questions.EndRun) it refuses with ErrStandingRunEnded and
	// writes nothing, checked in the same atomic step as the write:
	// EndRun sweeps the run's approvals (EndRunStandings) only after its
	// mark, so one written after the sweep would never end.
	PutStanding(ctx context.Context, s Standing) error
	// ListStandings lists the standing approvals live at now, oldest
	// first.
	ListStandings(ctx context.Context, now time.Time) ([]Standing, error)
	// DeleteStanding drops standing approval id and returns it as it was;
	// ErrNotFound when there is none.
	DeleteStanding(ctx context.Context, id string) (Standing, error)
	// EndRunStandings drops the StandingRun approvals of run (its
	// Run.Key) and returns them.
	EndRunStandings(ctx context.Context, run string) ([]Standing, error)
}

// ErrStandingRunEnded is PutStanding's refusal of a run-long standing
// approval for a run already ended: the approve that asked for it closed
// its question just before the run ended, and the grant came too late.
var ErrStandingRunEnded = &Error{Code: CodeConflict, Op: "grant standing approval", Message: "the run it would cover has ended"}

// StandingOffer is what an approval's approvers may grant with it, fixed
// at the ask from its route: a run-long standing approval, and, when
// Hours > 0, one for the agent for that many hours.
type StandingOffer struct {
	Hours int `json:"hours,omitempty"`
}

// StandingRequest asks for a standing approval along with an approve.
type StandingRequest struct {
	Scope StandingScope `json:"scope"`
	// SameArguments limits it to calls with the same arguments as this
	// one (as approved, when edited).
	SameArguments bool `json:"same_arguments,omitempty"`
}

// StandingUse is what a resolution keeps of the standing approval that
// closed it: which one, and who granted it when.
type StandingUse struct {
	ID        string    `json:"id"`
	GrantedBy Decider   `json:"granted_by"`
	GrantedAt time.Time `json:"granted_at"`
}

// standingOffer is what q's route lets its approvers grant, or nil: no
// standing approval for a hard-to-reverse (or unclassified) call, nor for
// one that needs a quorum (one voter may not grant for all, and a standing
// approval, which one person grants, never closes what needs several), nor
// on a route that forbids them. It is also what a standing approval may
// cover (standingFor).
func standingOffer(q *Question, route Route) *StandingOffer {
	if q.Kind != KindApproval || q.Call == nil || q.Reversibility != Reversible || q.Quorum > 1 || !route.StandingAllowed() {
		return nil
	}
	return &StandingOffer{Hours: route.StandingHours}
}

// checkStanding is the answer's standing request checked against what the
// ask offers.
func checkStanding(q *Question, req *StandingRequest, approved bool) error {
	if req == nil {
		return nil
	}
	offer := (*StandingOffer)(nil)
	if q.Call != nil {
		offer = q.Call.Standing
	}
	return checkOffer(q, offer, req, approved)
}

// noOffer refuses a standing approval q does not offer, naming the cause
// standingOffer (batchOffers, for a batch's calls) found at the ask, so
// the approver is not sent after one that does not hold.
func noOffer(q *Question) error {
	const op = "answer"
	switch {
	case q.Quorum > 1:
		return Errorf(CodeInvalid, op, "this approval needs %d people to agree, so it cannot grant a standing approval: one person grants that, and it would stand in for the others", q.Quorum)
	case q.Reversibility != Reversible:
		return Errorf(CodeInvalid, op, "this approval cannot grant a standing approval: its call is not marked reversible")
	}
	return Errorf(CodeInvalid, op, "this approval cannot grant a standing approval: its route forbids them")
}

// checkOffer checks a standing request against what a call of q offers.
func checkOffer(q *Question, offer *StandingOffer, req *StandingRequest, approved bool) error {
	const op = "answer"
	if req == nil {
		return nil
	}
	switch {
	case !approved:
		return Errorf(CodeInvalid, op, "a standing approval goes with %q", ApproveOption)
	case offer == nil:
		return noOffer(q)
	case req.Scope == StandingRun:
	case req.Scope == StandingAgent && offer.Hours > 0:
	case req.Scope == StandingAgent:
		return Errorf(CodeInvalid, op, "this approval's route allows standing approvals for the run only")
	default:
		return Errorf(CodeInvalid, op, "standing scope %q is not run or agent", req.Scope)
	}
	return nil
}

// grantStanding stores the standing approval an approve asked for, once
// that approve has closed q, and records it. The approve counts either
// way: a standing approval that could not be stored only means people
// are asked again.
func (s *Service) grantStanding(ctx context.Context, q *Question, req *StandingRequest, roles []string) (*Standing, error) {
	r := q.Resolution
	return s.grant(ctx, q, *q.Call, grantBy{Decider: r.Decider, Roles: roles, At: r.At, Edit: r.Edit}, req)
}

// grantBy is the approve a standing approval comes from; Roles are its
// decider's roles at the act, which the stored decider does not keep.
type grantBy struct {
	Decider Decider
	Roles   []string
	At      time.Time
	Edit    *ArgumentEdit
}

// grant stores a standing approval for call of q, approved as by says.
func (s *Service) grant(ctx context.Context, q *Question, call ToolCall, by grantBy, req *StandingRequest) (*Standing, error) {
	const op = "grant standing approval"
	st := Standing{
		ID: "st-" + string(NewID(0)), Scope: req.Scope, Agent: q.Agent, Tool: call.Tool, Route: q.Route,
		QuestionID: q.ID, GrantedBy: publicDecider(by.Decider), GrantedAt: by.At,
	}
	if route, ok := s.RouteOf(q); ok {
		st.GrantorRoles = route.LetIn(Decider{Surface: by.Decider.Surface, Roles: by.Roles})
	}
	if req.Scope == StandingRun {
		st.RunID = q.RunID
	} else {
		st.Until = by.At.Add(time.Duration(call.Standing.Hours) * time.Hour)
	}
	if req.SameArguments {
		st.ArgumentsSHA256 = call.ArgumentsSHA256
		if by.Edit != nil {
			st.ArgumentsSHA256 = by.Edit.ArgumentsSHA256
		}
	}
	err := s.store.PutStanding(ctx, st)
	if errors.Is(err, ErrStandingRunEnded) {
		// Refused, nothing written: the run ended between the approve's
		// close and this write. The log says why none was granted.
		s.refuse(ctx, q, by.Decider, fmt.Sprintf("standing approval not granted: run %s has ended", q.RunID))
		return nil, err
	}
	if err != nil {
		// The write may have landed all the same (a reply lost, the
		// replicas' acknowledgement late): it is taken back, so that no
		// standing approval stands that its approver was told was not
		// granted and the log never recorded.
		dctx, cancel := Settle(ctx)
		defer cancel()
		if _, derr := s.store.DeleteStanding(dctx, st.ID); derr != nil && ErrorCode(derr) != CodeNotFound {
			err = errors.Join(err, fmt.Errorf("taking back standing approval %s: %w", st.ID, derr))
		}
		return nil, Internal(op, err)
	}
	s.standingEvent(ctx, st, EventStandingGranted, by.Decider, standingReason(st))
	return &st, nil
}

func standingReason(st Standing) string {
	what := "tool " + st.Tool
	if st.ArgumentsSHA256 != "" {
		what += " with arguments sha256:" + st.ArgumentsSHA256
	}
	if st.Scope == StandingRun {
		return fmt.Sprintf("standing approval %s: %s, for the rest of run %s", st.ID, what, st.RunID)
	}
	return fmt.Sprintf("standing approval %s: %s, for agent %s until %s", st.ID, what, st.Agent, st.Until.UTC().Format(time.RFC3339))
}

// standingEvent appends one event about st to its granting question's
// log. Like a refusal it goes with no state change (appendAside).
func (s *Service) standingEvent(ctx context.Context, st Standing, kind EventKind, by Decider, reason string) {
	// The log names nobody (see Event): the grantor is the actor, by
	// pseudonym, and not in the payload.
	st.GrantedBy = Decider{Surface: st.GrantedBy.Surface}
	payload, _ := json.Marshal(st)
	s.appendAside(ctx, Event{QuestionID: st.QuestionID, RunID: st.RunID, At: s.now(), Kind: kind,
		Actor: s.pseudonym(by), Surface: by.Surface, Reason: reason, Payload: payload})
}

// standingFor finds a live standing approval that covers q, or nil.
func (s *Service) standingFor(ctx context.Context, q *Question, route Route) (*Standing, error) {
	if standingOffer(q, route) == nil {
		return nil, nil
	}
	all, err := s.store.ListStandings(ctx, q.CreatedAt)
	if err != nil {
		return nil, Internal("ask", err)
	}
	return s.covering(all, q, *q.Call, route), nil
}

// grantorAllowed reports whether st's grantor may still grant it: whether
// route (the route in force, as configured now) lets them in as its own
// decider, as answerBuild checked at the grant, with their account
// identified afresh, so their person is the configuration's word now. A
// standing approval speaks for its grantor on every ask it covers, so it
// covers only while that holds: a reload that removes their person,
// account or place on the route ends what they granted, as it ends what
// they may answer. It is not deleted (a reload that puts them back
// restores it, and an operator still sees and revokes it); it just covers
// nothing, and a person is asked.
//
// A grantor let in by a role ("role:..." entries: a Slack user group, a
// Discord role, an API or console token's role) is checked with the
// roles the route let them in by when they granted it (GrantorRoles):
// it covers while the route still lets that role in. Whether they still
// hold the role the platform alone knows, and only at an act; a grantor
// taken out of a group keeps their standing approvals until they end or
// are revoked (the README says so).
func (s *Service) grantorAllowed(st Standing, route Route) bool {
	d := s.identify(st.GrantedBy).Decider
	d.Roles = st.GrantorRoles
	return route.Allows(d)
}

// covering is the first of all that covers call of q on route (the
// route in force), or nil.
func (s *Service) covering(all []Standing, q *Question, call ToolCall, route Route) *Standing {
	for _, st := range all {
		if st.covers(q, call) && st.Live(q.CreatedAt) && s.grantorAllowed(st, route) {
			return &st
		}
	}
	return nil
}

// covers reports whether st's scope takes in call of q: the same agent,
// tool and route, its run (for a StandingRun), and its arguments (when
// st names them). Whether st is live, and its grantor still let in, the
// caller checks.
func (st Standing) covers(q *Question, call ToolCall) bool {
	return st.Agent == q.Agent && st.Tool == call.Tool && st.Route == q.Route &&
		(st.Scope != StandingRun || st.RunID == q.RunID) &&
		(st.ArgumentsSHA256 == "" || st.ArgumentsSHA256 == call.ArgumentsSHA256)
}

// errNotCovered is closeByStanding's build finding that the question as
// stored is not one st may close.
var errNotCovered = errors.New("not covered by the standing approval")

// closeByStanding closes a just-parked q as approved by st, through the
// chokepoint like any other close. It checks st against q as stored, not
// as the ask that found st built it: a repeat of an ask after a reload
// builds it anew under the rules and route in force, and a standing
// approval must not close the question parked before, asked of people as
// hard to reverse, of a quorum or on another route (its call offers
// none then); that question is left open, as it stands.
func (s *Service) closeByStanding(ctx context.Context, q *Question, st *Standing) (*Question, error) {
	o, err := s.resolve(ctx, attempt{op: "standing approval", id: q.ID, door: doorSystem, actor: st.GrantedBy,
		build: func(q *Question, now time.Time) (Transition, error) {
			if q.Call == nil || q.Call.Standing == nil || !st.covers(q, *q.Call) {
				return Transition{}, errNotCovered
			}
			yes := true
			d := publicDecider(st.GrantedBy)
			d.Name = StandingLabel(*st)
			res := &Resolution{State: StateAnswered, ClosedBy: CloserStanding, Decider: d, At: now, Approved: &yes,
				ArgumentsSHA256: q.Call.ArgumentsSHA256,
				Standing:        &StandingUse{ID: st.ID, GrantedBy: publicDecider(st.GrantedBy), GrantedAt: st.GrantedAt}}
			ev := s.closeEvent(q, res, "covered by "+standingReason(*st))
			return Transition{Resolution: res, Event: ev}, nil
		}})
	if errors.Is(err, errNotCovered) {
		got, err := s.store.Get(ctx, q.ID)
		return got, Internal("ask", err)
	}
	if err != nil {
		return nil, err
	}
	return o.Question, nil
}

// StandingLabel names a standing approval for people: "standing approval
// by Alice at 2026-06-01 09:00 UTC".
func StandingLabel(st Standing) string {
	return "standing approval by " + DeciderLabel(st.GrantedBy) + " at " + st.GrantedAt.UTC().Format("2006-01-02 15:04 UTC")
}

// ListStandings lists the standing approvals live now, for operators,
// each that covers nothing under the configuration in force marked
// Dormant, so that a list never shows as approving what it would not.
func (s *Service) ListStandings(ctx context.Context) ([]Standing, error) {
	all, err := s.store.ListStandings(ctx, s.now())
	if err != nil {
		return nil, Internal("list standing approvals", err)
	}
	for i, st := range all {
		switch route, ok := s.Route(st.Route); {
		case !ok:
			all[i].Dormant = "route " + st.Route + " is no longer configured"
		case !route.StandingAllowed():
			all[i].Dormant = "route " + st.Route + " no longer allows standing approvals"
		case route.Quorum > 1:
			all[i].Dormant = fmt.Sprintf("route %s now needs %d people to agree", st.Route, route.Quorum)
		case !s.grantorAllowed(st, route):
			all[i].Dormant = "its grantor may no longer decide on route " + st.Route
		}
	}
	return all, nil
}

// GrantOf is the live standing approval that the approve closing q
// granted, or nil: nil while it is not stored yet (Answer stores it just
// after the close, so a door woken by the close may ask first), when its
// write failed (its approver was told the approve alone counted), and
// once it has ended, and while it covers nothing under the configuration
// in force (Standing.Dormant: its grantor, let in by the route as the
// question was asked, is off the route now). A door that hands a host a
// rule of its own (adapters/hooks) trusts this, never the close's Grants
// alone: a rule the host keeps must not let through what askbridge would
// ask a person about.
func (s *Service) GrantOf(ctx context.Context, q *Question) (*Standing, error) {
	all, err := s.ListStandings(ctx)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].QuestionID == q.ID && all[i].Dormant == "" {
			return &all[i], nil
		}
	}
	return nil, nil
}

// RevokeStanding ends a standing approval at once: later asks are asked
// again. by is who revoked it.
//
// Who may revoke is an operator, on any route, and the doors decide it by
// role (the API's operator and admin tokens, the console's operators;
// chat surfaces offer no revoke), not by the route's allowlist: revoking
// grants nothing, it only makes the bridge ask people again, and an
// operator must be able to stop a standing approval in a hurry on a
// route that does not name them. Core's part is who it was: by is
// identified like every actor, so the log names the person (their one
// pseudonym, their configured name) whichever account they revoked from.
//
// A standing approval already revoked, ended with its run or past its
// window (which a store may keep until it next writes one) counts as
// gone, so revoking it is CodeNotFound, saying so, and records nothing.
func (s *Service) RevokeStanding(ctx context.Context, id string, by Decider) (Standing, error) {
	const op = "revoke standing approval"
	st, err := s.store.DeleteStanding(ctx, id)
	if err == nil && !st.Live(s.now()) {
		// Past its window: stores drop such approvals only when they
		// next write one, and deleting it stops nothing.
		err = ErrNotFound
	}
	if ErrorCode(err) == CodeNotFound {
		if !safeID(id) {
			id = "by that id" // not ours, and not to be echoed back
		}
		return Standing{}, Errorf(CodeNotFound, op,
			"there is no standing approval %s: it may have been revoked already, ended with its run, or passed its window", id)
	}
	if err != nil {
		return Standing{}, Internal(op, err)
	}
	who := s.identify(by).Decider
	s.standingEvent(ctx, st, EventStandingRevoked, who, "revoked by "+DeciderLabel(who))
	return st, nil
}

// endRunStandings ends the run-long standing approvals of run.
func (s *Service) endRunStandings(ctx context.Context, run Run) error {
	ended, err := s.store.EndRunStandings(ctx, run.Key())
	if err != nil {
		return Internal("end run", err)
	}
	for _, st := range ended {
		s.standingEvent(ctx, st, EventStandingEnded, System, "the run it covered has ended")
	}
	return nil
}

// SortStandings orders standing approvals oldest first, then by id, the
// order every store lists them in.
func SortStandings(all []Standing) {
	slices.SortFunc(all, func(a, b Standing) int {
		if c := a.GrantedAt.Compare(b.GrantedAt); c != 0 {
			return c
		}
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
}
