// Package bolt is the embedded single-file core.Store, the zero-setup
// default. It keeps everything in one bbolt file and gives a single process
// the same behaviour the Redis store gives several replicas: every
// transition is one bbolt write transaction (where Redis runs one Lua
// script), waiters and outbox consumers are woken in-process after the
// commit, and the file lock keeps a second process out.
//
// Writes check their context before they begin; once begun, a transaction
// runs to its end. Reads are local and short and do not look at their
// context at all, so a caller whose deadline has just passed can still
// read the state it was waiting for (core.Service.Wait does exactly that).
//
// # Files
//
// Each file holds one concern, so a newcomer finds where a rule lives.
// The store holds no rule of a question's next state: core.Next computes
// every change, and the store checks and writes it.
//
// Opening and layout: store.go holds [Options], the [Store], [Open]
// (which creates the buckets, marks the schema and refuses a file of a
// newer one), [Store.Close], [Store.Ping], [Store.Beat], [Store.Watch]
// and [Store.WatchFunc]; the records (JSON with a version) and their
// decoding; update and view, the doors of every write and read; and the
// signals that wake a blocked Claim on an enqueue, so it never polls.
// damaged.go checks the whole file at Open and refuses a damaged or
// emptied one with an error that says so, apart because bbolt panics on
// most damage, maybe much later on a background loop, rather than
// returning an error. keys.go holds every bucket name and key encoding,
// and its comment is the map of the file: what each bucket holds, and
// how keys sort (integers big-endian, times with the sign bit flipped so
// byte order is time order).
//
// The one writer: commit.go the group commit. bbolt runs one write
// transaction at a time and pays an fsync per commit, so every write of
// the store goes to one goroutine that applies what is waiting in one
// transaction and commits once for all, answering each caller only once
// its write is durable (law 3); a lone write is not delayed. A write
// function may run again when a batch-mate fails, so it refuses (refuse,
// errNoChange) before its first write and keeps its effects inside the
// transaction. health.go what the writer knows of failed commits, for
// [Store.Ping]: a read works from the mapped file while every commit fails
// (a full disk), so the probe asks the writer too; and a commit that
// failed after taking effect (its sync failed) stops all writes until the
// file is opened again. tx.go what a write announces after its commit
// (effects: the watched copies first, then the watchers and the blocked
// Claims), mutate, the shape of a change core does not compute whole (read
// the question, edit it, store it one version on), the open indexes kept
// in step with a question's state, and the outbox entries a write
// enqueues.
//
// The transitions, one transaction each: questions.go [Store.Create] (the
// question, its asked event and its deliveries together, law 3;
// refused if the id exists or its run has ended, and a repeated
// idempotency key hands back the first question); transitions.go
// [Store.Commit] (the chokepoint's write, only while the question is at
// the version its change was computed from, laws 1, 2 and 10: the state,
// the open and closed indexes, the events and the card updates),
// [Store.Renotify], [Store.RecordMessage] (a posted card, once per
// delivery key, law 4) and [Store.EndRun] (the run marked ended, the
// first time winning, and its open questions listed: the one writer
// puts it before or after each create, never between); events.go
// [Store.Append], an event with no state change. head.go reads just a
// stored record's layout, version and state for Commit's compare, apart
// because it runs inside the one writer's transaction, which every answer
// waits behind: it stops reading where those three end, and reads on past
// the question only in records written before that order.
//
// Reads: questions.go [Store.Get], [Store.ReadToChange] (Get, since a
// local read has no round trip to save), [Store.ListOpen] (the cursor is
// the last key listed, so no question is skipped or repeated),
// [Store.Between] and [Store.Due]. inbox.go [Store.OpenPage], the
// operator's paged and filtered list, its page and total read in one
// transaction; the open index's values say what a filter matches, so only
// the questions on the page are decoded. closed.go [Store.SearchClosed],
// newest close first, resuming right before the last key read. copies.go
// the copies of watched questions, so the reads a watch causes decode
// nothing (a quarter of the bridge's CPU with 1,000 long polls,
// BENCHMARKS.md); apart for its invariants (each tested in copies_test.go
// or in the store suite): the newest version told or read wins, and a
// purge is told as the last version there can be.
//
// The outbox: outbox.go [Store.Enqueue], [Store.Claim] (first deliveries
// whose lease went idle, their consumer presumed dead, then never-claimed
// ones in enqueue order; with none it waits for an enqueue, without
// polling), [Store.Ack], [Store.Retry], [Store.Extend] and [Store.Leave]
// (nothing to forget: the file keeps leases on deliveries, not a list of
// consumers). pending.go the deliveries enqueued with a delay: ordinary
// outbox records due only later, indexed by key in held/<surface> so
// [Store.Cancel] finds one without a scan, and the due times fixed before
// the transaction, so a transaction run again delays them the same.
// claimindex.go the claim index: each delivery no consumer leases has
// one entry, in ready/<surface> or under its due time in
// waiting/<surface>, kept in the transaction of every outbox write, so
// a claim reads the first entries and what it takes, never the
// deliveries that wait (upgrade builds it once for a file of version 1).
// stats.go [Store.OutboxStat], an outbox's depth and oldest entry.
// budget.go [Store.Spend], [Store.Until] and [Store.Refund]: the send
// budgets kept in memory (internal/membudget), since one process is
// everyone who spends.
//
// Events and the audit chain: events.go [Store.Events] and
// [Store.QuestionEvents]. chain.go the audit chain (core/audit) on the
// file: one stream whose positions are the events' seqs, every event
// chained in the transaction that appends it (appendEvent, which every
// write that records an event calls), the head kept in meta so an append
// reads no event back, with the audit key's record of it beside it (so
// that events cut off the end are found, and checked at Open, which
// notes in the chain a record it finds not under its key), and the
// checkpoint a purge appends before it deletes. log.go [Log] and
// [OpenLog]: the event log opened read-only (askbridge audit verify),
// apart because Open would create buckets and mark a schema, making a
// store of whatever file it is given, where a check must change nothing;
// [Log.Ends] gives verify the record of the chain's end.
//
// Leases and values: values.go [Store.Value], [Store.SetValue],
// [Store.SetValueFor], [Store.SetValueIf] (compare and set, in one
// transaction), [Store.DeleteValue], [Store.Lease],
// [Store.Release] and [Store.Once] (core.Values), on the store's clock,
// an expired value read as none before Purge drops it. standing.go the
// standing approvals, one bucket, pruned of spent ones at each grant
// (law 9). endings.go the journal of runs being ended (core.Endings), a
// bucket created on first use.
//
// Purge: purge.go [Store.Purge]: questions closed before the cutoff with
// their events and index entries and a first batch of loose events, in
// one transaction with an audit checkpoint first; then the rest of the
// loose events, Once keys, expiring values, leases and the markers of
// runs ended before the cutoff, a batch per transaction, so a purge
// holds the one writer only briefly at a time.
//
// Migration: one step. Open builds the claim index of a file of schema
// version 1 in one transaction and marks it version 2 (claimindex.go,
// upgrade); an earlier askbridge refuses such a file, since its writes
// would leave the index behind. Otherwise every record carries the schema
// version it was written in (store.go), and a file or record of a newer
// one is refused rather than misread; shapes written earlier read as they
// are: head.go's records from before the version and state came first,
// and pending.go's held card updates from before delays were generic.
package bolt
