// Package card is the platform-neutral card every surface renders, and
// the wording every surface shares: headings, markers, button labels,
// the outcome line of a closed question and the notes a person reads
// after acting. Slack, Discord, Telegram, Teams, email, ntfy, the console
// and the action-link pages render it in their own markup and say the
// same things.
//
// It points one way: card imports core (the question, its closer, its
// tally) and core never imports card. What a card needs from the domain
// core exports ([core.DeciderLabel], [core.CloserOf], [core.TallyOf],
// [core.Service.CallOn] for whom a reminder calls on); a wording of the
// domain that an agent or a store also reads (a resume, a refusal's
// error, a timeout's reason) stays in core, and the card reads it from
// there.
//
// # Files
//
// cardview.go the [Card] and its parts ([Section], [Action], [Marker],
// [Outcome]); cardbuild.go [New], which builds q's card as it stands,
// and the reminders ([NewReminder], [Reminder]); batchcard.go a batch's
// card, one section per call; approval.go an approval's "Edit and
// approve" and standing-approval buttons and the note after a grant;
// card.go the shared headings, markers and labels ([KindTitle],
// [ChoiceLabel]); notes.go what a clicker is told ([RecordedNote],
// [RefusalNote]); outcome.go the one wording, for people, of who or what
// closed a question ([OutcomeLine], [PartBy], [ClosingPerson]; law 12).
//
// A new kind of question adds its sections and buttons in cardbuild.go
// (a batch's in batchcard.go), its recorded note in notes.go and, if it
// closes in a way of its own, its outcome line in outcome.go; a new
// feature on approvals adds its buttons beside approval.go's.
package card
