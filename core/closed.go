package core

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// ClosedQuery picks closed questions for a search of the history (the
// console's Closed view and its export). Every field is optional; those
// set must all hold. Stores read their closed index newest first and
// keep what Match keeps, so the one meaning of each filter lives here.
type ClosedQuery struct {
	Route string
	Kind  Kind
	Agent AgentID
	// Decider is a person's name or an account id: it matches a question
	// that person or account decided, as a whole, by a vote or in part.
	Decider string
	Outcome ClosedAs
	Closer  Closer
	// From and To bound the closed time to [From, To); zero is open.
	From, To time.Time
	// Text is looked for, ignoring case, in the question, its context,
	// the options' titles, the form's items, the tool and its arguments.
	Text string
}

// ClosedAs is what a closed question came to, as a search filters it:
// its final state, with an approval's answer split into approved and
// denied.
type ClosedAs string

const (
	ClosedAnswered  ClosedAs = "answered"
	ClosedApproved  ClosedAs = "approved"
	ClosedDenied    ClosedAs = "denied"
	ClosedDeclined  ClosedAs = "declined"
	ClosedTimedOut  ClosedAs = "timed_out"
	ClosedExpired   ClosedAs = "expired"
	ClosedCancelled ClosedAs = "cancelled"
)

// ClosedOutcomes are the outcomes a search takes, in the order a form offers them.
var ClosedOutcomes = []ClosedAs{ClosedAnswered, ClosedApproved, ClosedDenied, ClosedDeclined, ClosedTimedOut, ClosedExpired, ClosedCancelled}

// ParseClosedAs accepts exactly the outcomes' names.
func ParseClosedAs(s string) (ClosedAs, error) {
	for _, o := range ClosedOutcomes {
		if string(o) == s {
			return o, nil
		}
	}
	return "", Errorf(CodeInvalid, "parse outcome", "outcome %q is not one of answered, approved, denied, declined, timed_out, expired, cancelled", s)
}

// ClosedAsOf is what closed q came to; "" while it is open. An answered
// single approval is approved or denied; any other answer (a batch's
// calls each have their own verdict) is answered.
func ClosedAsOf(q *Question) ClosedAs {
	if q.Resolution == nil || q.Open() {
		return ""
	}
	if q.State == StateAnswered {
		if a := q.Resolution.Approved; a != nil && !q.IsBatch() {
			if *a {
				return ClosedApproved
			}
			return ClosedDenied
		}
		return ClosedAnswered
	}
	return ClosedAs(q.State)
}

// MaxSearchText caps the text a search looks for.
const MaxSearchText = 200

// Validate refuses a query no question could be matched by sensibly.
func (cq ClosedQuery) Validate() error {
	const op = "search closed"
	if cq.Kind != "" {
		if _, err := ParseKind(string(cq.Kind)); err != nil {
			return err
		}
	}
	if cq.Outcome != "" {
		if _, err := ParseClosedAs(string(cq.Outcome)); err != nil {
			return err
		}
	}
	if cq.Closer != "" {
		if _, err := ParseCloser(string(cq.Closer)); err != nil {
			return err
		}
	}
	if !cq.From.IsZero() && !cq.To.IsZero() && !cq.From.Before(cq.To) {
		return Errorf(CodeInvalid, op, "the date range ends before it starts")
	}
	if !utf8.ValidString(cq.Text) || utf8.RuneCountInString(cq.Text) > MaxSearchText {
		return Errorf(CodeInvalid, op, "the search text is at most %d characters of UTF-8", MaxSearchText)
	}
	for _, f := range []string{cq.Route, string(cq.Agent), cq.Decider} {
		if err := checkLen(op, "a filter", f, MaxIDLen); err != nil {
			return err
		}
	}
	return nil
}

// Match reports whether closed question q is one the query asks for.
func (cq ClosedQuery) Match(q *Question) bool {
	r := q.Resolution
	if q.Open() || r == nil {
		return false
	}
	switch {
	case cq.Route != "" && q.Route != cq.Route,
		cq.Kind != "" && q.Kind != cq.Kind,
		cq.Agent != "" && q.Agent != cq.Agent,
		cq.Outcome != "" && ClosedAsOf(q) != cq.Outcome,
		cq.Closer != "" && CloserOf(q) != cq.Closer,
		!cq.From.IsZero() && r.At.Before(cq.From),
		!cq.To.IsZero() && !r.At.Before(cq.To):
		return false
	}
	if cq.Decider != "" && !decidedBy(q, cq.Decider) {
		return false
	}
	return cq.Text == "" || containsFold(searchText(q), cq.Text)
}

// decidedBy reports whether who (a person's name or an account id)
// decided q as a whole, voted on it, or answered a part of it. The
// bridge's own closes (a timeout, an expiry) are no one's, nor are those
// of a standing approval, whose granter the resolution names, alone or
// for a batch closed at the ask (closedAtAsk).
func decidedBy(q *Question, who string) bool {
	is := func(d Decider) bool {
		return d.Surface != SurfaceSystem && (d.Person == who || d.ID == who)
	}
	if c := CloserOf(q); is(q.Resolution.Decider) && c != CloserStanding && c != CloserPolicy && !closedAtAsk(q) {
		return true
	}
	for _, v := range q.Votes {
		if is(v.Decider) {
			return true
		}
	}
	for _, a := range q.Answers {
		if a.DecidedBy() != CloserStanding && a.DecidedBy() != CloserPolicy && is(a.Decider) {
			return true
		}
	}
	return false
}

// searchText is every part of q a text search looks in.
func searchText(q *Question) []string {
	out := []string{q.Text, q.Context, q.Labels.Project, q.Labels.Task}
	for _, o := range q.Options {
		out = append(out, o.Title)
	}
	for _, it := range q.Items {
		out = append(out, it.Question)
	}
	if q.Call != nil {
		out = append(out, q.Call.Tool, string(q.Call.Arguments))
	}
	for _, c := range q.Calls {
		out = append(out, c.Tool, string(c.Arguments))
	}
	return out
}

func containsFold(in []string, sub string) bool {
	sub = strings.ToLower(sub)
	for _, s := range in {
		if strings.Contains(strings.ToLower(s), sub) {
			return true
		}
	}
	return false
}

// ClosedPage is one page of a search of closed questions, newest close
// first. Next continues it ("" once the closed index is read to its end
// or to the query's From). A store reads a bounded stretch of its closed
// index per page, so a page may hold fewer than asked (even none) with
// Next set; ReadTo is then the closed time the search has reached.
type ClosedPage struct {
	Questions []*Question
	Next      string
	ReadTo    time.Time
}

// SearchScan bounds how many closed questions one search page reads from
// the store before it returns what it found: a rare match in a long
// history pages on rather than holding one request for the whole index.
const SearchScan = 2000

// SearchClosed lists closed questions that cq matches, newest close
// first, a page at a time: cursor "" starts at cq.To (or the newest).
func (s *Service) SearchClosed(ctx context.Context, cq ClosedQuery, cursor string, limit int) (ClosedPage, error) {
	if err := cq.Validate(); err != nil {
		return ClosedPage{}, err
	}
	switch {
	case limit <= 0:
		limit = 50
	case limit > 500:
		limit = 500
	}
	p, err := s.store.SearchClosed(ctx, cq, cursor, limit, SearchScan)
	if err != nil {
		if ErrorCode(err) == CodeInvalid {
			return ClosedPage{}, err
		}
		return ClosedPage{}, Internal("search closed", err)
	}
	return p, nil
}

// ClosedSearch is the store's search of its closed questions.
type ClosedSearch interface {
	// SearchClosed reads the closed index newest first, from just before
	// cursor ("" is cq.To, or the newest close), down to cq.From, and
	// returns the questions cq.Match keeps, at most limit of them. It
	// stops after reading scan questions (scan > 0) and then returns
	// what it has, with Next set to go on from there. A cursor the store
	// did not make is CodeInvalid.
	SearchClosed(ctx context.Context, cq ClosedQuery, cursor string, limit, scan int) (ClosedPage, error)
}
