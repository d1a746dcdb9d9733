// Package adaptertest holds the end-to-end scenarios every chat adapter
// passes, through one test driver with one implementation per platform.
// Each scenario runs the real program against a local fake of the
// platform's API: the agent asks and waits over the HTTP API, people click
// and reply on the fake platform, and the scenario checks what the agent
// got, what the cards show and what the event log recorded.
package adaptertest

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TeamRoute is the route every driver configures that names people, not
// accounts: "person:alice" (the driver's Allowed, displayed as
// TeamAlice, who takes DMs) and "group:" TeamGroup, whose one member is
// person "bob" (Allowed2, TeamBob), so that each way of naming people is
// what lets someone in. It reminds every hour, at most twice. Stranger
// is nobody's account.
const (
	TeamRoute = "team"
	TeamGroup = "team"
	TeamAlice = "Alice Configured"
	TeamBob   = "Bob Configured"
)

// Program is the running askbridge a driver started.
type Program struct {
	URL           string // the HTTP API
	AgentToken    string // a token with the agent role
	OperatorToken string // a token with the operator role
}

// User is a person on the platform.
type User struct {
	ID   string
	Name string // display name; cards show it once they answer
}

// Card is a question's message as the fake platform holds it. On a
// one-way door (email, ntfy), which cannot edit what it sent, it is the
// message as sent and what its links open to now: how the question
// stands, its outcome once closed; its buttons are the links that still
// act.
type Card struct {
	Room string
	ID   string // the platform's message id (a Slack ts, a Discord or Telegram message id)
	// Text is every visible text of the message, flattened into one
	// string (blocks, embeds, content), for substring checks.
	Text    string
	Buttons []Button // the message's clickable controls, in order
}

// Button is one control on a card.
type Button struct {
	Label string
	Value string // what the platform sends back on a click: an encoded core.Ref
}

// Post is any message the bot posted in the room that is not a card
// (reminders, digests, thread replies, prompts).
type Post struct {
	Text string
	// Raw is the post as sent, markup included: where mentions are.
	Raw string
}

// Forgery is a way to tamper with an inbound request.
type Forgery int

const (
	BadSignature   Forgery = iota // the platform's signature or secret is wrong
	StaleTimestamp                // signed correctly, but too old
)

// Driver is one platform's side of the scenarios. Every method fails the
// test itself on error; waits are bounded.
type Driver interface {
	Surface() core.Surface
	// Start runs the real program, wired to a fresh fake of the platform
	// and a fresh store, with clock as its clock. Route "ops" posts to the
	// driver's room and lets Allowed and Allowed2 decide on this surface
	// (and not Stranger); the operator token may decide through the API.
	// The downtime threshold is at most one hour. Route TeamRoute posts
	// to the same room and names people alone (see Team).
	Start(t *testing.T, clock core.Clock) Program
	// Restart stops the program, runs whileDown (nil: nothing), and starts
	// it again on the same store, fake and clock (the fake keeps its
	// messages). Moving the clock in whileDown is a downtime: no heartbeat
	// can land in between.
	Restart(t *testing.T, whileDown func()) Program
	Allowed() User
	Allowed2() User
	Stranger() User
	// Card waits until the card of question id, posted and recorded by
	// the program, satisfies cond, and returns it. Use cond to wait for an edit; a nil cond takes the card
	// as it is once it exists.
	Card(t *testing.T, id core.QuestionID, cond func(Card) bool) Card
	// DM is Card for the copy of the card in u's direct messages.
	DM(t *testing.T, u User, id core.QuestionID, cond func(Card) bool) Card
	// Click presses b as u, the way the platform delivers a click, and
	// returns the text the platform showed u alone about it (an ephemeral
	// message, a callback answer), or "" if none.
	Click(t *testing.T, u User, c Card, b Button) string
	// Reply sends free text as u answering card c the platform's way (a
	// thread reply, a reply to a prompt, a modal). For a form it answers
	// the item whose free-text button is b; otherwise b is nil.
	Reply(t *testing.T, u User, c Card, b *Button, text string)
	// Edit presses b ("Edit and approve") as u, fills the form the
	// platform opens (a modal, or the bot's prompt to reply to) with
	// args, and sends it. It returns the arguments the form started with
	// as the platform shows them, and what the platform told u alone
	// about the submission ("" when the card's edit is the only answer).
	Edit(t *testing.T, u User, c Card, b Button, args string) (start, told string)
	// Deny presses b (Deny) as u and sends the deny the platform's way:
	// where the platform asks for an optional reason first (Discord's
	// modal), it sends none. It returns what the platform told u alone.
	Deny(t *testing.T, u User, c Card, b Button) string
	// Forge sends a click on b with the given tampering and returns the
	// HTTP status the program answered. applies is false when the platform
	// has no such check (Telegram has no timestamps): status is then 0.
	Forge(t *testing.T, u User, c Card, b Button, f Forgery) (status int, applies bool)
	// Posts waits until the bot's non-card posts in the room satisfy cond,
	// and returns them.
	Posts(t *testing.T, cond func([]Post) bool) []Post
}
