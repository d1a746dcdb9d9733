package slack

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rs/zerolog"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// handleBudget bounds the work on one Socket Mode event or click. Its
// ack waits for it no longer than the ack budget (heldAck); past that,
// acknowledged, it goes on.
const handleBudget = 10 * time.Second

// maxHandlers bounds the Socket Mode events handled at once (each is a
// few store and Web API calls); maxPending bounds those handled or
// waiting to be (spawn).
const (
	maxHandlers = 16
	maxPending  = 1024
)

// ackFlush is how long a stopping adapter keeps its connection up once
// every ack it owed is handed to the SDK (drainAcks): the SDK queues an
// ack and writes it on a goroutine of its own, and says nothing when it
// has, so a connection closed at once could drop the last of them.
const ackFlush = 200 * time.Millisecond

// socketHealthy is how long a Socket Mode connection must stay up for the
// pause before the next one, once the SDK gives up on it (a refused
// token), to start over from retryPauseMin: without that it only grew,
// and a bridge that had a few such hiccups over days waited the longest
// pause at its next one, its clicks and replies arriving nowhere
// meanwhile.
const socketHealthy = time.Minute

// runSocket receives Socket Mode events until ctx ends. Each click and
// event is handled on its own goroutine and acknowledged once handled,
// or once the ack budget has passed should its handling run longer
// (heldAck); a modal submission is acknowledged with its response once
// handled. Other envelopes are acknowledged at once. So a slow handler
// never delays another's acknowledgement. The SDK reconnects by itself;
// a connection it gives up on (a refused token) is retried after a
// pause, so the HTTP side and the outbox keep working meanwhile. Once
// ctx ends the connection stays up for the acks still owed on it
// (drainAcks), and is closed then.
func (a *Adapter) runSocket(ctx context.Context) {
	pause := retryPauseMin
	for ctx.Err() == nil {
		opts := []socketmode.Option{socketmode.OptionLog(debugLog{a.log})}
		if a.opts.PingInterval > 0 {
			opts = append(opts, socketmode.OptionPingInterval(a.opts.PingInterval))
		}
		sm := socketmode.New(a.api, opts...)
		runCtx, cancel, done := runClient(ctx, sm)
		owed := &owedAcks{}
		healthy, err := a.socketEvents(ctx, runCtx, sm, done, owed)
		if ctx.Err() != nil {
			a.drainAcks(sm, done, owed)
			cancel()
			return
		}
		cancel()
		if healthy {
			pause = retryPauseMin
		}
		a.log.Error().Err(err).Dur("retry_in", pause).Msg("socket mode stopped")
		if !a.sleep(ctx, pause) {
			return
		}
		pause = min(2*pause, retryPauseMax)
	}
}

// runClient runs sm until it gives up (its error on done) or cancel is
// called. Its context (conn) outlives life by the acks owed on it (see
// drainAcks), and ends with the run: an ack waits for room among the 20
// responses the client has yet to send, which nothing sends once it has
// given up, so an ack on the read loop with 20 left unsent (a lost
// connection's) waited for good, the loop never reading done.
func runClient(life context.Context, sm *socketmode.Client) (conn context.Context, cancel context.CancelFunc, done <-chan error) {
	conn, cancel = context.WithCancel(context.WithoutCancel(life))
	ended := make(chan error, 1)
	go func() {
		defer cancel()
		ended <- sm.RunContext(conn)
	}()
	return conn, cancel, ended
}

// uptime follows the connections of one run of the SDK's client: since
// when the one up now has been up (zero while none is), and whether any
// stayed up socketHealthy.
type uptime struct {
	now     func() time.Time
	since   time.Time
	healthy bool
}

func (u *uptime) up() { u.since = u.now() }

// down ends the connection up, if any. The SDK names no loss of its own:
// a loss is seen at the next try to connect, or at the run's end when
// that try was refused (its news may be left unread), so a connection's
// time counts at most that one try too long.
func (u *uptime) down() {
	if !u.since.IsZero() && u.now().Sub(u.since) >= socketHealthy {
		u.healthy = true
	}
	u.since = time.Time{}
}

// socketEvents reads one connection's envelopes until it ends or the
// adapter stops (life ends), and reports whether a connection of it
// stayed up socketHealthy. Acks go on that connection (ctx), counted in
// owed while they wait on a handling; the work of an envelope belongs to
// the adapter (life): Slack sends an acknowledged envelope once, so work
// dropped with a lost connection would be clicks and replies that
// counted nowhere, their writers told nothing.
func (a *Adapter) socketEvents(life, ctx context.Context, sm *socketmode.Client, done <-chan error, owed *owedAcks) (bool, error) {
	u := uptime{now: a.now}
	// A modal's response rides on its ack: one still waiting for a free
	// handler once this loop ends (a stop, a connection lost) is not
	// taken. A stop ends the wait at once: with every pending slot
	// taken, the loop waits in spawn, and a connection kept up for the
	// stop's acks would hold it there until a handler finished. The
	// loop's own acks end with it too (read): with twenty responses
	// unsent (a lost connection's), an ack waits for a connection the
	// client may take minutes to make again, and one kept up for the
	// stop's acks would hold the stop there as long.
	read, stopRead := context.WithCancel(ctx)
	defer stopRead()
	defer context.AfterFunc(life, stopRead)()
	for {
		if life.Err() != nil {
			// Before any envelope buffered meanwhile: once stopped,
			// the adapter takes no new work (drainAcks).
			return u.healthy, life.Err()
		}
		select {
		case err := <-done:
			u.down()
			return u.healthy, err
		case <-life.Done():
			return u.healthy, life.Err()
		case evt := <-sm.Events:
			switch evt.Type {
			case socketmode.EventTypeConnected:
				u.up()
				a.log.Info().Msg("socket mode connected")
			case socketmode.EventTypeConnecting:
				u.down() // the connection before, if any, is lost
			case socketmode.EventTypeConnectionError:
				a.log.Warn().Msg("socket mode connection failed; retrying")
			case socketmode.EventTypeEventsAPI:
				ev, ok := evt.Data.(slackevents.EventsAPIEvent)
				if !ok || ev.Type != slackevents.CallbackEvent {
					a.ack(read, sm, evt)
					continue
				}
				h := a.holdAck(ctx, sm, evt, owed)
				more := evt.Request != nil && evt.Request.RetryAttempt < maxRetries
				a.handle(life, h, func(ctx context.Context) note {
					// Left unacknowledged, an event comes again, as
					// one answered 503 does over HTTP; acknowledged
					// already (its handling ran long), a failure is
					// told, as no retry is to come.
					n, done := a.onEvent(ctx, ev, func() bool { return more && h.withhold() })
					if !done {
						h.withhold()
						return note{}
					}
					h.done()
					return n
				})
			case socketmode.EventTypeInteractive:
				if ic, ok := evt.Data.(slack.InteractionCallback); ok && ic.Type == slack.InteractionTypeViewSubmission {
					// A modal's errors ride on the ack itself, so the
					// answer is taken before acking, within the budget,
					// on its own goroutine: the next envelopes are read
					// and acked meanwhile.
					a.submit(read, ctx, sm, evt, ic, owed)
					continue
				}
				ic, _ := evt.Data.(slack.InteractionCallback)
				c, ok := clickOf(ic)
				if !ok {
					a.ack(read, sm, evt)
					continue
				}
				h := a.holdAck(ctx, sm, evt, owed)
				a.handle(life, h, func(ctx context.Context) note {
					text := a.onClick(ctx, c)
					h.done() // the answer is in the store: the clicker may hear so
					return note{channel: c.channel, user: c.user, text: text}
				})
			case socketmode.EventTypeSlashCommand:
				a.ack(read, sm, evt) // none are registered; acknowledge so Slack does not retry
			case socketmode.EventTypeErrorBadMessage:
				a.ackUnreadable(read, sm, evt)
			}
		}
	}
}

// ack acknowledges evt. It is bounded by ctx, the connection's life (or,
// on the read loop, the loop's, which a stop ends too): once the client
// stops, or while it connects again, nothing drains its responses, and
// the read loop may still take envelopes it had buffered; a plain Ack
// would then block the loop, and the shutdown waiting for it, for good.
func (a *Adapter) ack(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	a.ackWith(ctx, sm, evt, nil)
}

// ackWith is ack with a payload (a modal's response; nil for none).
func (a *Adapter) ackWith(ctx context.Context, sm *socketmode.Client, evt socketmode.Event, payload any) {
	if evt.Request == nil {
		return
	}
	if err := sm.AckCtx(ctx, evt.Request.EnvelopeID, payload); err != nil {
		a.log.Warn().Err(err).Msg("socket mode ack failed")
	}
}

// ackUnreadable acknowledges an envelope the SDK could not read (an
// event type it does not know, a field of a shape it did not expect),
// which the SDK hands over unacknowledged: Slack would send it again and
// again, to be read no better, each time counted as a failure of the app.
func (a *Adapter) ackUnreadable(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	bad, ok := evt.Data.(*socketmode.ErrorBadMessage)
	if !ok {
		return
	}
	var env struct {
		EnvelopeID string `json:"envelope_id"`
	}
	if json.Unmarshal(bad.Message, &env) != nil || env.EnvelopeID == "" {
		a.log.Warn().Err(bad.Cause).Msg("socket mode message ignored: not readable")
		return
	}
	a.log.Warn().Err(bad.Cause).Msg("socket mode envelope acknowledged and ignored: not readable")
	a.ack(ctx, sm, socketmode.Event{Request: &socketmode.Request{EnvelopeID: env.EnvelopeID}})
}

// drainAcks keeps a stopping adapter's connection up until every ack
// owed on it is sent or given up, so a click or reply its handler
// records after the stop is acknowledged (not shown to its writer as
// failed), then for ackFlush, for the SDK to write the last of them.
// Each owed ack is settled within the ack budget of its envelope's
// arrival, before the stop: the wait is bounded by the ack budget (and
// the flush) from the stop, and ends at once if the connection ends.
// Envelopes that arrive meanwhile are left unacknowledged, to come again
// (an event, to another replica) or to show their clicker an error: the
// adapter takes no new work once stopped.
func (a *Adapter) drainAcks(sm *socketmode.Client, done <-chan error, owed *owedAcks) {
	n, paid := owed.owing()
	if n == 0 {
		return
	}
	a.log.Info().Int("acks", n).Msg("socket mode stopping: connection kept up for the acks in hand")
	bound := time.NewTimer(a.opts.AckBudget + ackFlush)
	defer bound.Stop()
	over := bound.C
	var flushed <-chan time.Time
	for {
		select {
		case <-paid:
			paid, over = nil, nil
			flushed = time.After(ackFlush)
		case <-flushed:
			return
		case <-over:
			a.log.Warn().Msg("socket mode stopped with acks still owed")
			return
		case <-done:
			return // the connection ended: nothing more goes on it
		case evt := <-sm.Events:
			if evt.Request != nil {
				a.log.Debug().Str("type", string(evt.Type)).Msg("socket mode envelope left unacknowledged: stopping")
			}
		}
	}
}

// handle runs f on its own goroutine, within handleBudget, for the
// envelope whose ack is h. If f is not run (ctx ended while it waited
// for a free handler), h is withheld: the envelope was not handled, so
// Slack is to send it again, or show its clicker an error.
func (a *Adapter) handle(ctx context.Context, h *heldAck, f func(context.Context) note) {
	a.spawn(ctx, time.Time{}, func() {
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handleBudget)
		defer cancel()
		a.queueNote(f(hctx))
	}, func() { h.withhold() })
}

// spawn runs f on its own goroutine and returns at once, so the read
// loop goes on reading envelopes, and their acks go within Slack's 3 s
// (heldAck), however long the work waits (a slow store, a slow Slack).
// At most cap(a.sema) run at once; the others wait for a slot on their
// own goroutines, counted in a.work. Only when cap(a.pending) are
// running or waiting does spawn itself wait: at Slack's pace that is
// minutes of work, and an event then comes again (retries are recognised
// by their event id). Work still waiting when ctx ends, or at by (unless
// zero), is dropped, and instead (if set) runs in its place: an envelope
// whose answer rides on its ack is answered in time, and one whose ack
// waits on the work is given up.
func (a *Adapter) spawn(ctx context.Context, by time.Time, f, instead func()) {
	select {
	case a.pending <- struct{}{}:
	case <-ctx.Done():
		if instead != nil {
			instead()
		}
		return
	}
	a.work.Go(func() {
		defer func() { <-a.pending }()
		wait := ctx
		if !by.IsZero() {
			var cancel context.CancelFunc
			wait, cancel = context.WithDeadline(ctx, by)
			defer cancel()
		}
		select {
		case a.sema <- struct{}{}:
		case <-wait.Done():
			if instead != nil {
				instead()
			}
			return
		}
		defer func() { <-a.sema }()
		f()
	})
}

// debugLog sends the SDK's own log lines to ours at debug level: they may
// carry payloads, which never go to info.
type debugLog struct{ log zerolog.Logger }

func (l debugLog) Output(_ int, s string) error {
	l.log.Debug().Str("sdk", "socketmode").Msg(s)
	return nil
}

// submit takes a submitted modal and acks it with the modal's response
// (its errors, or nothing to close it), owed on the connection (ctx)
// until then. The answer is taken off the read loop, so a slow one never
// holds up later acks past Slack's 3 s. Its budget runs from arrival:
// waiting for a free slot comes out of it, and one that finds none in
// time, or before the read loop ends (read), is acked with "try again",
// nothing taken.
func (a *Adapter) submit(read, ctx context.Context, sm *socketmode.Client, evt socketmode.Event, ic slack.InteractionCallback, owed *owedAcks) {
	deadline := time.Now().Add(a.opts.AckBudget)
	owed.add()
	respond := func(resp *slack.ViewSubmissionResponse) {
		defer owed.paid()
		var payload any // nil, not a nil *ViewSubmissionResponse: that would ack "payload": null
		if resp != nil {
			payload = resp
		}
		a.ackWith(ctx, sm, evt, payload)
	}
	a.spawn(read, deadline, func() {
		hctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		resp, n := a.onSubmit(hctx, ic)
		cancel()
		respond(resp)
		a.queueNote(n)
	}, func() {
		if ctx.Err() != nil {
			owed.paid() // the connection is gone: no ack goes
			return
		}
		respond(a.busySubmit(ic))
	})
}
