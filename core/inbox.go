package core

import (
	"context"
	"fmt"
	"strings"
)

// OpenFilter narrows a listing of open questions, for an inbox that pages
// through thousands; an empty field matches every question.
type OpenFilter struct {
	Route, Kind string
	Agent       AgentID
	Project     string
	// Reversibility matches a question's as Normalize reads it, so
	// "unclassified" finds old records that carry none.
	Reversibility Reversibility
}

// Check refuses a filter no question could ever match by mistake: an
// unknown kind or reversibility is a caller's typo, not an empty inbox.
func (f OpenFilter) Check() error {
	if f.Kind != "" {
		if _, err := ParseKind(f.Kind); err != nil {
			return Errorf(CodeInvalid, "filter", "kind %q is not one of clarification, decision, approval, form", f.Kind)
		}
	}
	switch f.Reversibility {
	case "", Reversible, HardToReverse, Unclassified:
	default:
		return Errorf(CodeInvalid, "filter", "reversibility %q is not one of reversible, hard_to_reverse, unclassified", f.Reversibility)
	}
	return nil
}

// Match reports whether q passes the filter. It is the one definition of
// a match (through MatchFields), so every store pages the same questions.
func (f OpenFilter) Match(q *Question) bool { return f.MatchFields(q.OpenFields()) }

// OpenFields are what an OpenFilter matches of a question: none of them
// changes while it is open, so a store may keep them beside its index of
// open questions and match those rather than read each question.
type OpenFields struct {
	Route         string
	Kind          Kind
	Agent         AgentID
	Project       string
	Reversibility Reversibility
}

// OpenFields are q's fields an OpenFilter matches.
func (q *Question) OpenFields() OpenFields {
	return OpenFields{Route: q.Route, Kind: q.Kind, Agent: q.Agent, Project: q.Labels.Project, Reversibility: q.Reversibility}
}

// MatchFields reports whether a question with these fields passes the
// filter.
func (f OpenFilter) MatchFields(o OpenFields) bool {
	rev := o.Reversibility
	if rev == "" {
		rev = Unclassified
	}
	return (f.Route == "" || o.Route == f.Route) && (f.Kind == "" || string(o.Kind) == f.Kind) &&
		(f.Agent == "" || o.Agent == f.Agent) && (f.Project == "" || o.Project == f.Project) &&
		(f.Reversibility == "" || rev == f.Reversibility)
}

// All reports whether the filter matches every question, so that a store
// can count the open questions without reading each one.
func (f OpenFilter) All() bool { return f == OpenFilter{} }

// OpenPage is one page of the open questions a filter matches, in
// ListOpen's order.
type OpenPage struct {
	Questions []*Question
	// Next is the cursor of the page after this one; "" after the last.
	Next string
	// Total is how many open questions match, on every page together.
	Total int
}

// MaxOpenPage bounds one page of OpenPage: a page, not a dump.
const MaxOpenPage = 500

// OpenPage lists one page of the open questions f matches, hard to
// reverse first, then oldest, with how many match in all. cursor is ""
// for the first page, else the Next of the page before.
func (s *Service) OpenPage(ctx context.Context, f OpenFilter, cursor string, limit int) (OpenPage, error) {
	if err := f.Check(); err != nil {
		return OpenPage{}, err
	}
	f.Route, f.Agent, f.Project = strings.TrimSpace(f.Route), AgentID(strings.TrimSpace(string(f.Agent))), strings.TrimSpace(f.Project)
	switch {
	case limit <= 0:
		limit = 50
	case limit > MaxOpenPage:
		limit = MaxOpenPage
	}
	p, err := s.store.OpenPage(ctx, f, cursor, limit)
	if err != nil {
		if ErrorCode(err) == CodeInvalid {
			return OpenPage{}, err
		}
		return OpenPage{}, Internal("open page", fmt.Errorf("%w", err))
	}
	for i, q := range p.Questions {
		p.Questions[i] = s.counted(q)
	}
	return p, nil
}
