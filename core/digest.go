package core

import (
	"context"
	"time"
)

// Digest is "what did you ask me while I was away": questions asked and
// closed in [From, To), and those still open.
type Digest struct {
	From   time.Time   `json:"from"`
	To     time.Time   `json:"to"`
	Asked  []*Question `json:"asked"`
	Closed []*Question `json:"closed"`
	Open   []*Question `json:"open"`
	// AskedMore, ClosedMore and OpenMore say that list stopped at
	// digestLimit before it read everything: its length is then a floor
	// ("500 or more"), which a reader must not be shown as the count.
	AskedMore  bool `json:"asked_more,omitempty"`
	ClosedMore bool `json:"closed_more,omitempty"`
	OpenMore   bool `json:"open_more,omitempty"`
}

// digestLimit bounds each list of a digest; a digest is a summary.
const digestLimit = 500

// DigestQuery selects what a digest covers.
type DigestQuery struct {
	// From and To bound the period, [From, To); a zero To means now.
	From, To time.Time
	// ClosedTo, when after To, lists the closes up to it too: the
	// "while you were away" digest counts as the downtime's the closes of
	// the bridge's first moments back, when its first tick times out what
	// passed its deadline while nobody could see it (awayCloses).
	ClosedTo time.Time
	// Decider, when set, keeps only questions that decider may answer,
	// with the roles it carries counted like a click's.
	Decider *Decider
	// Person, when set, keeps only questions the configured person may
	// answer from any of their accounts.
	Person string
	// Route, when set, keeps only that route's questions.
	Route string
}

// Digest summarises the period dq names, filtered as it says.
func (s *Service) Digest(ctx context.Context, dq DigestQuery) (Digest, error) {
	const op = "digest"
	from, to := dq.From, dq.To
	if to.IsZero() {
		to = s.now()
	}
	if !from.Before(to) {
		return Digest{}, Errorf(CodeInvalid, op, "since must be before until")
	}
	var accounts []identified
	if dq.Decider != nil {
		accounts = append(accounts, s.identify(*dq.Decider))
	}
	if dq.Person != "" {
		if _, ok := s.Person(dq.Person); !ok {
			return Digest{}, Errorf(CodeInvalid, op, "no person named %q", dq.Person)
		}
		accounts = append(accounts, s.accounts(dq.Person)...)
	}
	filtered := dq.Decider != nil || dq.Person != ""
	keep := func(q *Question) bool {
		if dq.Route != "" && q.Route != dq.Route {
			return false
		}
		if !filtered {
			return true
		}
		for _, d := range accounts {
			if s.allowed(q, d) {
				return true
			}
		}
		return false
	}
	d := Digest{From: from.UTC(), To: to.UTC()}
	for _, part := range []struct {
		idx  TimeIndex
		dst  *[]*Question
		more *bool
	}{{ByCreated, &d.Asked, &d.AskedMore}, {ByClosed, &d.Closed, &d.ClosedMore}} {
		until := to
		if part.idx == ByClosed && dq.ClosedTo.After(to) {
			until = dq.ClosedTo
		}
		qs, err := s.store.Between(ctx, part.idx, from, until, digestLimit)
		if err != nil {
			return Digest{}, Internal(op, err)
		}
		// A full read may have left some unread, kept or not: the
		// filtered length is then only a floor.
		*part.dst, *part.more = filter(qs, keep), len(qs) >= digestLimit
	}
	cursor := ""
	for {
		qs, next, err := s.store.ListOpen(ctx, cursor, 100)
		if err != nil {
			return Digest{}, Internal(op, err)
		}
		d.Open = append(d.Open, filter(qs, keep)...)
		if len(d.Open) > digestLimit || (len(d.Open) == digestLimit && next != "") {
			// Some open question is left out, or may be.
			d.Open, d.OpenMore = d.Open[:digestLimit], true
			break
		}
		if next == "" {
			break
		}
		cursor = next
	}
	return d, nil
}

func filter(qs []*Question, keep func(*Question) bool) []*Question {
	out := []*Question{}
	for _, q := range qs {
		if keep(q) {
			out = append(out, q)
		}
	}
	return out
}
