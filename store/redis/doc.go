// Package redis is the production core.Store, on Redis: standalone,
// Sentinel or Cluster through go-redis's UniversalClient (Redis 6.2 or
// later; 7.0+ recommended).
//
// Every change of a question is one Lua script over keys of one shard
// (see keys.go), so it is atomic and, on a cluster, stays in one hash
// slot. A question's id names its shard. Events are a stream per shard;
// the outbox is a stream per shard and chat surface, read by a consumer
// group so a dead replica's deliveries are reclaimed by another; wake-ups
// travel over one pub/sub subscription per Store.
//
// Callers import it under another name:
//
//	import redisstore "github.com/askbridge/askbridge/store/redis"
//
// # Files
//
// Each file holds one concern, so a newcomer finds where a rule lives;
// the Lua scripts are in lua/, one per atomic step, each headed by its
// KEYS, ARGV and return codes, and each named below beside the Go that
// runs it. The store holds no rule of a question's next state: core.Next
// computes every change, and the scripts check and write it.
//
// Opening and layout: store.go holds [Options], the [Store], [Open] and
// [New] (which refuses a store made with another shard count, migrates,
// makes the outbox consumer groups, prunes dead consumers with
// leave.lua, and subscribes before it returns), [Store.Close],
// [Store.Ping] (every shard's primary answers, and as a primary: a
// failover under way reads as unavailable) and [Store.Beat] (beat.lua),
// with the helpers every file shares: an id's shard, the scripts' clock,
// an event's Seq from its shard's number, a call's attempt name. connect.go
// [Dial], [Topology] and [Connect]: a URL parsed by go-redis's own parser
// for its topology, the client tuned to follow a failover within seconds
// (go-redis's defaults leave a cluster client dialling a dead primary for
// up to a minute). keys.go builds every key and channel
// name, and no other file spells one: all of shard N share the hash tag
// {<prefix>:s<N>}, and its comment is the map of what each key holds.
// record.go is how a question is kept: a hash of the fields the scripts
// compare and set without parsing JSON, and its document and resolution
// in strings of their own, read only whole; with the open index's member.
// pack.go the packed form (parts joined by a unit separator, not JSON,
// whose member names would take as much room again) in which card.go
// keeps a posted card as fields of its question's hash, small enough for
// Redis's compact encoding, and eventcodec.go an event in its stream;
// both read what earlier versions stored as JSON.
//
// The scripts: scripts.go embeds lua/*.lua, prepends to each script the
// definitions of common.lua (the return codes and the shared helpers,
// such as append_event and hold) it uses, runs a script by its hash and
// whole after a NOSCRIPT (a restarted or promoted server), and maps a
// transition's return code to core's errors in one switch (outcome), so
// "exactly one answer" lives in one script and one switch. hot.go
// chooses, per call, whether a hot-path call (a transition, a question
// read) goes straight to the client or through go-redis's autopipeliner:
// the first eight in flight go straight, since a burst of clicks queued
// behind one batch waited longer than it saved (BENCHMARKS.md).
//
// The transitions, one script each: questions.go [Store.Create]
// (create.lua: the question, its asked event and its deliveries in one
// step, law 3; a repeated idempotency key hands back the first question);
// transitions.go [Store.Commit] (resolve.lua: the chokepoint's write,
// only while the question is at the version its change was computed
// from, laws 1, 2 and 10), [Store.Renotify] (renotify.lua: a reminder,
// an escalation or a re-ask, moving the deadline), [Store.RecordMessage]
// (record_message.lua: a posted card, once per delivery key, law 4) and
// [Store.EndRun] (end_run.lua, shard by shard, atomic with each shard's
// creates so a question of the run is refused or listed, never missed);
// events.go [Store.Append] (append.lua: an event with no state change,
// such as a refusal). Commit also tells the read cache and the local
// watchers before and after its script (waker.go's resolving).
//
// Reads: questions.go [Store.Get] and [Store.ReadToChange]; queries.go
// [Store.ListOpen], [Store.Between], [Store.Due] and the loading of
// questions (read.lua, so a hash and its document are read at one moment
// even when the autopipeliner splits two commands over two batches). A
// close leaves its question's members in the open, deadline and
// run-open indexes, so it costs fewer commands; the readers drop those
// they meet (queries.go's dropStale). inbox.go [Store.OpenPage], the
// operator's paged and filtered list of open questions, reading whole
// only the questions on the page. closed.go [Store.SearchClosed] and the
// closed index's catch-up (closed_catchup.lua): a close only marks its
// first event, and every reader of the closed index (the search, Between
// by closed time, Purge) first adds the marked closes to it. copies.go
// the read cache of watched questions, apart for its invariants (each
// tested in copies_test.go): a copy may trail Redis, never lead it, and
// only ReadToChange hands out a copy of an open question, since Commit's
// compare refuses a change computed from a stale one.
//
// Wake-ups: waker.go [Store.Watch], [Store.WatchFunc] and the one pub/sub
// subscription that carries every replica's changes to local watchers:
// it pings a quiet connection, subscribes anew when one goes silent
// (go-redis reconnects only a connection that fails a write), and wakes
// every watcher when wake-ups may have been lost.
//
// The outbox: outbox.go [Store.Enqueue] (deliveries of no transition),
// [Store.Claim] (claim.lua: first deliveries a dead consumer held too
// long, then new ones, moving due retries and delayed deliveries onto the
// stream), [Store.Ack] (ack.lua: off the stream, only while the claim
// is still the consumer's its id names), [Store.Retry] (retry.lua: off the stream into the
// zset of retries, in one step), [Store.Extend] (extend.lua: a slow send
// keeps its claim, and the claims another consumer took over are named,
// so the drain drops them unsent) and [Store.Leave] (leave.lua). pending.go the
// deliveries enqueued with a delay: their enqueue (later.lua), their part
// of a commit's call, and [Store.Cancel] (cancel.lua), taking one back
// until a claim has put it on the stream. stats.go [Store.OutboxStat],
// an outbox's depth and oldest entry. budget.go [Store.Spend] and
// [Store.Until]: the send budgets as rate buckets kept in Redis
// (redis_rate), so every replica spends from the same one;
// [Store.Refund] (refund.lua: a send given back, up to the burst).
//
// Events and the audit chain: events.go [Store.Events], paging every
// shard's stream by Seq (with several shards event_mark.lua gives the
// lowest number a shard can still hand out, so a reader skips no event
// appended after its page), and [Store.QuestionEvents]. chain.go the
// audit chain (core/audit): Go computes each event's keyed digest as it
// renders the event, the script appending it links it to the stream's
// newest entry, and the key never goes to Redis; it keeps the heads the
// scripts replied. log.go [Log] and [OpenLog]: the event log opened only
// to be read (askbridge audit verify), apart because opening a Store
// writes (the shard count, a migration, consumer groups) and a check must
// not.
//
// Durability and failover: durable.go [Durability]: with it on, each
// acknowledged transition's script goes with a WAIT (or WAITAOF) behind
// it on one connection to the node that ran it, through a wrapping
// client (durableClient), since WAIT counts only its own connection's
// writes and the autopipeliner cannot promise one; the scripts then publish no wake-up,
// and the store announces a change once its replicas hold it. latewake.go
// the changes whose wait ran out, or whose caller's context ended while
// it was out: one loop per shard waits for the replicas again and
// announces them, so their waiters are not left until their next read.
// durable_redirect.go the durable write's own errors, and how it follows
// a cluster's MOVED and ASK to where a reshard or failover moved its slot.
// failover.go [Unavailable], which tells a failover's or an unreachable
// server's errors (try again: the API's 503) from breakage.
// sentinels.go, on Sentinel through Connect, follows the Sentinels' word
// that the primary moved and moves the subscription there at once,
// rather than when the old primary is made a replica.
// spread.go [Store.Spread], which primary serves each shard, which serve
// logs on a cluster (shards spread as their slots hash, not evenly).
//
// Leases and values: values.go [Store.Value], [Store.SetValue],
// [Store.SetValueFor] and [Store.DeleteValue] as plain keys with Redis's
// own expiry; [Store.SetValueIf] (set_value_if.lua: compare and set,
// told it set the key when a run sent again finds its own write);
// [Store.Lease] and [Store.Once] (lease.lua: Once takes its
// key under an owner new to the call, so a call go-redis sends again
// still finds itself first) and [Store.Release] (release.lua);
// [Store.ClaimOnce] (once_claim.lua: an inbound event's key held as "~"
// and its holder while it is handled), [Store.ConfirmOnce]
// (once_confirm.lua: marked done once its handling ends) and
// [Store.ReleaseOnce] (release.lua on the claim). Expiry
// runs on the server's clock, so replicas' clocks need not agree.
// standing.go the standing approvals, one hash read whole and changed
// under WATCH, so two replicas never both take the same one. endings.go
// the journal of runs being ended (core.Endings), one sorted set in shard
// 0, written before the run's end is marked.
//
// Purge: purge.go [Store.Purge] (purge.lua: closed questions with their
// events and index entries, and loose events, shard by shard in batches,
// each candidate checked again in the script; an audit checkpoint of what
// goes is appended first), and the markers of runs ended before the
// cutoff.
//
// Migration: migrate.go brings every shard of an earlier layout to the
// current one when a store opens, before it serves, and records what each
// layout was: migrate.lua rewrites a batch of questions, each once, and
// migrate_shard.lua then sets the shard's layout, so two replicas opening
// at once, or one killed halfway, leave the same records.
//
// The store's own tests run it on one private redis-server (main_test.go);
// topology/ runs the conformance suite, replicas' races and failovers on
// a real Cluster and a Sentinel-watched primary.
package redis
