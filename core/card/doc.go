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
// [Outcome]); cardbuild.go [New], which builds q's card as it stands
// from what every card shares and its kind's part (kinds.go),
// and the reminders ([NewReminder], [Reminder]); batchcard.go a batch's
// card, one section per call; approval.go an approval's "Edit and
// approve" and standing-approval buttons and the note after a grant;
// card.go the shared headings, markers and labels ([KindTitle],
// [ChoiceLabel]); ownlabel.go how an agent's option label is drawn on a
// button ([AgentLabel]: on one line, quoted where it reads as one of
// askbridge's own, the console's controls among them; law 7); names.go
// how every line names a person ([PersonName], [TallyOf]: a display name
// cleaned as the agent's resume cleans it, so no bidi override or line
// break in it reorders or forges askbridge's words);
// notes.go what a clicker is told ([RecordedNote],
// [RefusalNote]); outcome.go the one wording, for people, of who or what
// closed a question ([OutcomeLine], [PartBy], [ClosingPerson]; law 12);
// cutmiddle.go [CutMiddle], the one way every chat renderer cuts a call's
// arguments to its room: head and tail kept, what was left out counted
// (Approve records the whole call, so its end must show); digest.go the
// words of a "while you were away" digest's counts ([DigestCount],
// [DigestNotListed]: a list core capped is a floor, said as one);
// crowded.go what every chat renderer keeps of a crowded card's calls
// ([NamedCutFloor], [Approves], [Unseen]: no button approves arguments a
// card hides); confirm.go [NeedsConfirm], which answers are shown back
// before they are recorded, wherever a surface can; click.go
// [ClickCounts], whether a click whose data the clicker's app sent is a
// button of its card; then.go [ThenWords], what a question's next
// deadline will do (core.AtDeadline), as the console and the CLI say it.
//
// A new kind of question adds its card to kinds.go's kindCards (its
// sections and buttons, its outcome's label, its choice as people read
// it, its parts' words, its recorded note), which TestEveryKindHasACard
// checks against core.Shapes; only if it closes in a way of its own does
// it add an outcome line in outcome.go. A new feature on approvals adds
// its buttons beside approval.go's (approvalBody) and, per call,
// batchcard.go's.
package card
