// Package core is askbridge's domain and its one resolve chokepoint. Every
// door (the chat adapters, the HTTP API, MCP, the CLI, the timeout ticker)
// calls a [Service]; only the Service changes questions, and it does so
// through the small [Store] interface declared here. core does no I/O of
// its own and imports nothing of askbridge's but fence.
//
// # Where each law is kept
//
// The laws are in shared/DESIGN.md; each is kept in one place:
//
//  1. One chokepoint: [Service.Answer], [Service.Decline], [Service.Cancel],
//     [Service.EndRun] and the timeouts of [Service.Tick] all build an
//     attempt and pass it to Service.resolve (resolve.go), which runs the
//     checks, computes the change with [Next] and writes it with one
//     atomic [Questions.Commit]. Adapters only get [Service.Values] of the
//     store, never the store itself.
//  2. Exactly once: [Next] refuses a closed question with a
//     [*ClosedError] naming who closed it, how and when ([ErrClosed],
//     worded for people by core/card's RefusalNote), and [Questions.Commit] writes a [Change] only while
//     the question is at the version it was computed from; a change that
//     went stale ([*StaleError]) is computed again on the question as
//     stored, so of racing attempts exactly one closes it.
//  3. Durable before visible: [Service.Ask] stores the question, its asked
//     event and its post deliveries in one [Questions.Create]; Commit
//     stores the answer before any waiter wakes ([Service.Wait]).
//  4. At least once, never silently twice: core/loops' Deliver drains the
//     [Outbox] through [Service.Claims] and acks only after a [Courier]
//     succeeded; [Service.DeliverOne], the one attempt at a delivery,
//     posts no card already recorded under the same [Delivery] key, and a
//     post that may have left an unrecorded copy says so in its notified
//     event. A close's webhook ([Question].CallbackURL, callback.go) is in
//     the close's own Change and drained the same way (core/loops'
//     DeliverCalls, through a [Caller]), under a key ([WebhookKey]) that
//     stays its event id across retries.
//  5. Stateless buttons: a button carries a [Ref] ([Ref.Encode],
//     [DecodeRef]); [AnswerFor] turns it into an [AnswerInput] against the
//     stored question, on any replica, after any restart.
//  6. Same door, same checks: Service.allowed is the one authorisation
//     check ([Route.Allows], [Service.MayAnswer] for showing controls); an
//     id that is malformed, unknown or not the caller's reads as
//     [ErrNotFound].
//  7. Fenced at the boundary: [ResumeOf] builds what the agent resumes with
//     and puts every human-written string through fence.
//  8. Honest recovery: timeouts, expiry, refusals and deliveries given up
//     on are events of their own ([EventTimedOut], [EventExpired],
//     [EventRefused], [EventUndelivered]); [Service.Boot] re-notifies after
//     downtime.
//  9. Bounded: [Service.Purge] drops closed questions after
//     [Config].Retention; sizes are capped by the Max* constants.
//  12. The truth about the closer: each closing transition records its
//     [Closer] in [Resolution].ClosedBy, and each part its own
//     ([ItemAnswer.DecidedBy]); [CloserOf] is the one reader (it also
//     reads records stored before closers were), and [ResumeOf] and
//     [CallResultsOf] word the resume from it (closer.go); core/card's
//     OutcomeLine and PartBy word every card, console card and late
//     clicker's note from it.
//  10. One transition: [Next] (next.go) is the one place the next state
//     of a question is computed, for every kind and feature, with no I/O;
//     stores hold no rule of it. A kind's attempt is built by its home
//     (kind.go's answerTransition, from the kind's answer reading and the
//     features it takes; systemClose in resolve.go for a close without an
//     answer), what must be checked against the question as stored is its
//     home's next rule (next_kinds.go's features composed), and the
//     tables in kind_test.go and next_test.go are extended; no store code
//     and no Lua change.
//  13. Policy before people: a route's [Rule]s, CEL conditions compiled
//     by [New] ([CompileRules]), decide a single-call approval at the ask
//     (rules.go): allow and deny close it through the chokepoint with
//     [CloserPolicy] and the rule in [Resolution].Policy; ask reshapes it,
//     and one that sends it to another route hands it to that route's
//     rules, which may deny it or ask it more strictly (rules_reroute.go).
//
// # The path of a click
//
// A person clicks a button on a card in Slack, Discord or Telegram:
//
//   - The adapter decodes the button's value with [DecodeRef], reads the
//     question with [Service.Get], and maps the platform user to a
//     [Decider] (with their roles at that moment).
//   - [AnswerFor] turns the ref into an [AnswerInput] (or the adapter calls
//     [Service.Decline]); the adapter calls [Service.Answer].
//   - The chokepoint checks the decider against the question's [Route],
//     validates the answer (answer.go), and computes the [Change] with
//     [Next]: the question with its [Resolution], the event, and a
//     [DeliverUpdate] for every card of the question. [Questions.Commit]
//     writes all of it in one atomic step, if the question is still as
//     read, and wakes the question's [Waker] watchers.
//   - The adapter tells the clicker what happened (core/card's
//     RecordedNote, or RefusalNote when the click changed nothing). [Service.Wait], woken,
//     returns the closed question to the agent's long poll or MCP call,
//     which resumes with [ResumeOf]. core/loops' drain hands the update
//     deliveries, through [Service.DeliverOne], to each platform's
//     [Courier], which renders core/card's card.New to show the outcome
//     on every card.
//
// # Files
//
// config.go holds [Config] and [New], and reconfigure.go
// [Service.Reconfigure], which swaps a whole checked configuration in at
// once, and [Service.RouteOf], the route a question was asked under;
// ask.go [Service.Ask] (planned with no I/O, then its shortcuts read,
// then stored), askinput.go [AskInput] and the checks every ask shares,
// kind.go each kind's home ([Shape]; kind_*.go one file per kind, see
// "Where a new kind goes"), with idempotency.go making a repeated ask return the
// question it parked, callback.go a closing question's webhook, and
// inbox.go the paged list of open questions ([Service.OpenPage]);
// resolve.go the chokepoint, its retries and the one permission check,
// actrefusal.go that check asked of one button without acting
// ([Service.ActRefusal]),
// ending.go the closes without an answer (decline, withdrawal, the end
// of a run), endings.go the journal of runs being ended ([Endings]),
// by which the ticker finishes an end cut short and answers meanwhile
// are refused; arguments.go a call's arguments as every reader reads
// them (canonical, hashed, bounded in depth); next.go the one transition ([Next], [Change]) and
// next_kinds.go the features its rules are composed of; answer.go
// [Service.Answer] and the parts of an answer; reads.go [Service.Get],
// [Service.Wait], the [Watcher] a wait parked elsewhere holds (told of
// changes by a function with [Watcher.Notify], which the store calls
// back: [Waker]) and the listings; closed.go the search of closed questions ([ClosedQuery],
// [Service.SearchClosed]) and waiting.go who an open question waits on
// ([Service.WaitingOn]) and the routes as an operator reads them;
// digest.go the "while you were away" [Digest]; deliver.go the domain's
// part of the outbox drain ([Service.DeliverOne] one attempt,
// [Service.Attempted] its outcome, [Service.Claims] the drain's door to
// the outbox), courier.go the [Courier] it hands deliveries to and the
// errors a Courier returns ([RetryAfter], [NotReady], [Permanent],
// [NotSent]), seen.go how a door claims an inbound platform event while
// it handles it and marks it seen once done ([Service.Sight], [Sighting],
// [OnceState], [HandleAgain]), and
// chat.go the [ChatAdapter] every chat platform meets; batch.go a batch
// of tool calls asked at once, its validation and the standing approvals
// that cover its calls, batchanswer.go the decisions on its calls,
// batchresult.go their outcomes and per-call resumes ([CallOutcomes],
// [CallResultsOf]); lifecycle.go one
// pass each of the ticker, boot, catch-up, heartbeat and retention, with
// the one rule of what a deadline does ([AtDeadline]), and
// away.go the [Downtime] a timeout's deadline may have passed in, and
// the catch-up's record of a downtime, its retries and its re-notices;
// closer.go who or what closed a
// question ([Closer], [CloserOf]); people.go the configured
// [Person]s and groups and the one place an account becomes a person;
// quorum.go the votes of questions that need several people ([Vote]),
// tally.go how they count against the routes in force, read in one
// place for the chokepoint and for every card, resume and view
// ([TallyOf], [VoteCount]), and refresh.go the ticker's sweep after a
// change of the configuration that edits the cards whose tally it
// changed, refreshshared.go how the replicas share it (once across
// them, and after a start under another configuration); remind.go the reminders of routes with remind_every, the
// direct messages and the per-person digests after downtime, and
// remindscan.go whether a reminder pass lists the open questions at all;
// resume.go what the agent resumes with once a question closes
// ([ResumeOf]); rules.go
// the routes' policy rules ([Rule], [CompileRules], [Service.Evaluate]),
// rules_eval.go their evaluation over one ask, rules_budget.go the
// budget all the conditions of one ask share and the bound on each
// regular expression's match, rules_reroute.go the rules
// of the routes an ask rule sends the ask on to (applyRules, the one place
// the rules meet an ask; rules_pinned.go one configuration across a door's steps of it, [Service.Pin]), rules_batch.go the rules over each call of a batch, rules_cover.go
// whether they leave every call of a tool, or one call whatever its
// project, to a standing approval ([Service.EveryCallCovered],
// [Service.CallCovered]); store.go the [Store] interface every
// store implements, and [Event] with its [Chain].
//
// # Where a new kind goes
//
// Every rule that differs by kind has one home: a kind value per
// [Shape] (clarification, decision, approval, batch, form) in kind.go's
// homes, written in its own file (kind_clarification.go,
// kind_decision.go, kind_approval.go, kind_batch.go with batch.go,
// batchanswer.go and batchresult.go, kind_form.go). It holds the kind's
// check of an ask, its buttons' reading ([AnswerFor]), its reading of an
// answer into what it records, the features it takes (parts, votes, the
// answer fields only it reads), its rule of [Next], and its part of the
// resume ([ResumeOf]; fence words each part of the message, one writer
// each, and knows no kinds). A sixth kind adds a Shape, its value in
// homes and its rows to kind_test.go's table (TestEveryKindHasAHome
// fails until every rule is written); core/card keeps its card in a
// table of its own (core/card's kinds.go), which its test checks
// against [Shapes], and cmd/askbridge/internal/app's fence property test asks one of
// every Shape. Nothing of a store changes.
//
// Features layered on kinds plug in at one place each: a quorum is a
// kind's votes flag (voteTransition in quorum.go builds the vote,
// withVote in next_kinds.go counts it); parts are its parts name
// (partsTransition in answer.go, withParts in next_kinds.go); edited
// arguments and standing approvals are the approval's answer reading
// (kind_approval.go, with edit.go and standing.go) and, per call, the
// batch's (batchItems in batchanswer.go), with their buttons beside
// them and their cards' in core/card's approval.go.
//
// The vocabulary: question.go the [Question] and its parts, route.go the
// [Route], enums.go the kinds, states, surfaces and event kinds,
// history.go the events as a question's history reads them, edit.go
// edited arguments of an approval, standing.go standing approvals,
// held.go the card a click's own response shows, whose update core
// delays for the caller to cancel ([Service.Delivered]), and ref.go the
// buttons' [Ref]s. A delivery that is to go later unless called off
// needs no store code: it carries a [Delivery] Delay, and
// [Outbox.Cancel] takes it back by key until claimed. The plumbing:
// errors.go coded errors ([Errorf], [ErrorCode]) and unavailable.go a
// store that cannot answer now, or a change of unknown fate; id.go question ids; duration.go the one duration parser
// ([ParseDuration]); clock.go the [Clock]; budget.go the send budgets
// couriers share; observe.go the
// [Observer] metrics hear from; trace.go the OpenTelemetry spans of a
// question's life; prettyjson.go arguments as people read them.
//
// The runtime loops are core/loops': the outbox drain (a batch's rooms at
// once, each room's in order; budgets, back-off and hand-backs), the
// single-connection lease, and the timers that run lifecycle.go's passes.
// They call core's exported API alone and core never imports them: a
// decision about a question goes here, when and how often it is made
// goes there.
//
// The cards every surface renders, and the wording they share (headings,
// markers, button labels, outcome lines, the notes a clicker reads), are
// core/card's: it imports core and core never imports it, so the domain
// exports what a card needs ([DeciderLabel], [Service.CallOn], [TallyOf],
// [CloserOf]) and no wording points back from core to a card.
//
// The audit chain that makes the event log tamper-evident is
// core/audit's: how an event's [Chain] is computed (the stores compute
// it in the write that appends the event), the checkpoint a purge
// records, and the verifier.
package core
