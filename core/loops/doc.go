// Package loops runs askbridge's background work over core's exported
// API: the outbox drain that hands each surface's deliveries to its
// courier ([Deliver], [DeliverCalls]), the lease that keeps a single
// connection (the Telegram poller, the Discord gateway) on one replica
// ([Leader]), and the timers of the ticker, the heartbeat, retention,
// reminders and the catch-up after downtime ([Run]).
//
// It lives under core/ because it is core's runtime, not a door: it
// imports core and nothing else of ours, and core never imports it
// (cmd/askbridge/internal/app's TestImportsPointInwards keeps both). The split is
// between deciding and timing. core decides: what one delivery does
// ([core.Service.DeliverOne]: a card recorded under the same key is not
// posted again), what a dropped delivery records
// ([core.Service.Attempted]), what a tick closes or re-notifies
// ([core.Service.Tick]), what boot records and re-notifies
// ([core.Service.Boot], [core.Service.CatchUp]). loops decides when and
// how often: claiming batches and keeping them claimed, the rooms at
// once, budgets and back-off, handing back on shutdown, lease
// renewal, intervals. The drain reaches the outbox only through
// [core.Service.Claims], which cannot enqueue: deliveries come from the
// chokepoint's changes alone.
//
// # Files
//
// deliver.go the drain ([Deliver], [DeliverOptions]) and its retry
// policy, rooms.go the rooms at once, each in order, and when to claim
// more, park.go the line of a busy room's deliveries sent back to the
// outbox for a while, spend.go the send budgets (asked before
// they are spent, spent right before the courier's call), handback.go
// the turns of the deliveries a spent budget sends back to the outbox,
// owned.go the check that a claim is still this consumer's before its
// send (and that one handed back to it is not queued twice), stop.go the one deadline of a stopping drain's hand-backs,
// calls.go the webhook outbox's drain
// ([DeliverCalls]), lead.go the single-connection lease ([Leader]), run.go
// the timers ([Run], [Intervals]).
package loops
