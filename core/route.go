package core

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// Room is a place on a chat surface where a route's cards are posted: a
// Slack or Discord channel id, a Telegram chat id.
type Room struct {
	Surface Surface `json:"surface" yaml:"surface"`
	ID      string  `json:"id" yaml:"id"`
}

// Route names where a question is posted and who may decide it. Deciders
// are listed per surface; an entry is a platform user id, "role:<id>" for
// anyone holding that role or group, or "*" for anyone the surface has
// authenticated. A surface the route does not list refuses everyone
// (fail closed).
type Route struct {
	Name     string               `json:"name" yaml:"-"`
	Rooms    []Room               `json:"rooms,omitempty" yaml:"rooms"`
	Deciders map[Surface][]string `json:"deciders,omitempty" yaml:"deciders"`
	// EscalateTo names the route a timed-out question with the escalate
	// policy is posted to; its deciders may then answer too.
	EscalateTo string `json:"escalate_to,omitempty" yaml:"escalate_to"`
	// Standing: false forbids standing approvals on this route; unset or
	// true allows the run-long one (standing.go).
	Standing *bool `json:"standing,omitempty" yaml:"standing"`
	// StandingHours > 0 also lets approvers grant one for the agent, for
	// that many hours.
	StandingHours int `json:"standing_hours,omitempty" yaml:"standing_hours"`
}

// StandingAllowed reports whether approvers on this route may grant
// standing approvals.
func (r Route) StandingAllowed() bool { return r.Standing == nil || *r.Standing }

// Allows reports whether d may decide on this route through d.Surface.
func (r Route) Allows(d Decider) bool {
	if d.ID == "" {
		return false
	}
	for _, entry := range r.Deciders[d.Surface] {
		switch {
		case entry == "*":
			return true
		case entry == d.ID:
			return true
		case len(entry) > 5 && entry[:5] == "role:" && slices.Contains(d.Roles, entry[5:]):
			return true
		}
	}
	return false
}

// Pseudonym is how the event log names a person: an HMAC of their
// surface and platform id under a key from configuration. The same person
// always gets the same pseudonym, so the log can be grouped by actor, yet
// it names nobody to whoever reads it without the key.
func Pseudonym(key []byte, d Decider) string {
	if d.ID == "" {
		return ""
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(d.Surface))
	m.Write([]byte{0})
	m.Write([]byte(d.ID))
	return hex.EncodeToString(m.Sum(nil)[:16])
}
