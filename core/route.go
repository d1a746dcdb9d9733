package core

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"
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
// (fail closed). People entries ("person:alice", "group:infra-leads")
// apply on every surface where the person has an account.
type Route struct {
	Name string `json:"name" yaml:"-"`
	// Rooms are where the route's cards go. An email or ntfy room may
	// name people ("person:carol", "group:leads"): each one's own
	// address or topic, looked up whenever a card goes out (Posts).
	Rooms    []Room               `json:"rooms,omitempty" yaml:"rooms"`
	Deciders map[Surface][]string `json:"deciders,omitempty" yaml:"deciders"`
	People   []string             `json:"people,omitempty" yaml:"people"`
	// persons is People expanded into person names by New; a route built
	// by hand without New lets no person in through People (fail closed).
	persons map[string]bool
	// posts is Rooms with the rooms naming people looked up, by New and
	// RouteOf (directory.posts); bound says it was.
	posts []Room
	bound bool
	// EscalateTo names the route a timed-out question with the escalate
	// policy is posted to; its deciders may then answer too.
	EscalateTo string `json:"escalate_to,omitempty" yaml:"escalate_to"`
	// Standing: false forbids standing approvals on this route; unset or
	// true allows the run-long one (standing.go).
	Standing *bool `json:"standing,omitempty" yaml:"standing"`
	// StandingHours > 0 also lets approvers grant one for the agent, for
	// that many hours.
	StandingHours int `json:"standing_hours,omitempty" yaml:"standing_hours"`
	// RemindEvery, when set, reminds the route's deciders of a question
	// that stays open, every so long after it was asked, at most
	// RemindMax times (DefaultRemindMax when zero). See remind.go.
	RemindEvery time.Duration `json:"remind_every,omitempty" yaml:"remind_every"`
	RemindMax   int           `json:"remind_max,omitempty" yaml:"remind_max"`
	// Quorum is how many different people must agree to close an
	// approval or a decision (1 when unset); an ask may ask for more, up
	// to MaxQuorum (or, on a route of people alone, all of them). Deny
	// says how an approval's denies count (quorum.go).
	Quorum    int        `json:"quorum,omitempty" yaml:"quorum"`
	MaxQuorum int        `json:"max_quorum,omitempty" yaml:"max_quorum"`
	Deny      DenyPolicy `json:"deny,omitempty" yaml:"deny"`
	// Rules decide an approval asked on this route before a person sees
	// it, first match wins (rules.go); New compiles them.
	Rules []Rule `json:"-" yaml:"-"`
	// CallbackURL is told when a question on the route closes, unless
	// the ask names its own (callback.go).
	CallbackURL string `json:"callback_url,omitempty" yaml:"callback_url"`
}

// StandingAllowed reports whether approvers on this route may grant
// standing approvals.
func (r Route) StandingAllowed() bool { return r.Standing == nil || *r.Standing }

// Allows reports whether d may decide on this route through d.Surface.
// It trusts d.Person, which only Service.identify may set; so every act
// is checked through Service.allowed, and doors ask Service.MayAnswer,
// never this with an account as the platform gave it.
func (r Route) Allows(d Decider) bool {
	if d.ID == "" {
		return false
	}
	if d.Person != "" && r.persons[d.Person] {
		return true
	}
	for _, e := range r.Deciders[d.Surface] {
		switch entry := ParseDecider(e); {
		case entry.Anyone:
			if !d.Outsider {
				return true
			}
		case entry.Role != "":
			if slices.Contains(d.Roles, entry.Role) {
				return true
			}
		case entry.ID == d.ID:
			return true
		}
	}
	return false
}

// DeciderEntry is one of a route's decider entries on a surface, read:
// "*" lets in anyone the surface authenticated, "role:<name>" anyone
// holding that role (a Slack user group, a Discord role, an API or
// console token's role), and anything else is one account's platform id
// (or a one-way door's recipient). Exactly one field is set. Every reader
// of the entries goes through ParseDecider, so the spelling is read in
// one place and an entry means the same thing when the bridge checks,
// lists, reminds and shows it.
type DeciderEntry struct {
	Anyone bool
	Role   string
	ID     string
}

// ParseDecider reads one decider entry. "role:" with no name is an
// account id that no platform gives out; the configuration refuses it.
func ParseDecider(e string) DeciderEntry {
	switch role, ok := strings.CutPrefix(e, "role:"); {
	case e == "*":
		return DeciderEntry{Anyone: true}
	case ok && role != "":
		return DeciderEntry{Role: role}
	default:
		return DeciderEntry{ID: e}
	}
}

// LetIn are those of d's roles that the route's "role:" entries on d's
// surface let in: what a later check of d's act against the route in
// force needs of them (a standing approval's grantor, a vote's voter).
func (r Route) LetIn(d Decider) []string {
	var out []string
	on := r.RolesOn(d.Surface)
	for _, role := range d.Roles {
		if slices.Contains(on, role) && !slices.Contains(out, role) {
			out = append(out, role)
		}
	}
	return out
}

// RolesOn are the roles the route's "role:" entries on sf let in, in
// the order written.
func (r Route) RolesOn(sf Surface) []string {
	var out []string
	for _, e := range r.Deciders[sf] {
		if role := ParseDecider(e).Role; role != "" && !slices.Contains(out, role) {
			out = append(out, role)
		}
	}
	return out
}

// RolesToCheck are the roles (platform groups) on surface sf that the
// routes deciding q name now: its own route's and, once it has
// escalated, its escalation route's. A door that must look up a
// person's groups itself (Slack's user groups, which its payloads do not
// carry) looks up only these; core still checks what it finds.
func (s *Service) RolesToCheck(q *Question, sf Surface) []string {
	var out []string
	for _, r := range s.decidingRoutes(q) {
		for _, role := range r.RolesOn(sf) {
			if !slices.Contains(out, role) {
				out = append(out, role)
			}
		}
	}
	return out
}

// Pseudonym is how the event log names a person: an HMAC of their
// surface and platform id under a key from configuration or, for an
// account the configuration ties to a person, of that person, so their
// acts on every surface share one actor. The same person always gets the
// same pseudonym, so the log can be grouped by actor, yet it names nobody
// to whoever reads it without the key.
func Pseudonym(key []byte, d Decider) string {
	if d.ID == "" {
		return ""
	}
	m := hmac.New(sha256.New, key)
	if d.Person != "" {
		// "person" is no surface, so a person never shares a pseudonym
		// with an account of the same name.
		m.Write([]byte("person"))
		m.Write([]byte{0})
		m.Write([]byte(d.Person))
		return hex.EncodeToString(m.Sum(nil)[:16])
	}
	m.Write([]byte(d.Surface))
	m.Write([]byte{0})
	m.Write([]byte(d.ID))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Posts are the rooms a card of the route goes to now: Rooms, with
// those naming people looked up in the directory of the configuration
// in force. A route built by hand without New posts to none of those
// (fail closed).
func (r Route) Posts() []Room {
	if r.bound {
		return r.posts
	}
	var out []Room
	for _, room := range r.Rooms {
		if !namesPeople(room.ID) {
			out = append(out, room)
		}
	}
	return out
}

// hasRoom reports whether the route posts to room id on surface sf.
func (r Route) hasRoom(sf Surface, id string) bool {
	for _, room := range r.Posts() {
		if room.Surface == sf && room.ID == id {
			return true
		}
	}
	return false
}
