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

// handleBudget bounds the work on one Socket Mode event, which is
// acknowledged before it is handled.
const handleBudget = 10 * time.Second

// runSocket receives Socket Mode events until ctx ends. Each envelope is
// acknowledged at once and then handled on its own goroutine (a modal
// submission is handled first, as its ack carries the modal's response,
// but on its own goroutine too), so a slow handler never delays the next
// acknowledgement. The SDK reconnects by itself; a connection it gives up
// on (a refused token) is retried after a pause, so the HTTP side and the
// outbox keep working meanwhile.
func (a *Adapter) runSocket(ctx context.Context) {
	pause := time.Second
	for ctx.Err() == nil {
		opts := []socketmode.Option{socketmode.OptionLog(debugLog{a.log})}
		if a.opts.PingInterval > 0 {
			opts = append(opts, socketmode.OptionPingInterval(a.opts.PingInterval))
		}
		sm := socketmode.New(a.api, opts...)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- sm.RunContext(runCtx) }()
		err := a.socketEvents(runCtx, sm, done)
		cancel()
		if ctx.Err() != nil {
			return
		}
		a.log.Error().Err(err).Dur("retry_in", pause).Msg("socket mode stopped")
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Minute)
	}
}

func (a *Adapter) socketEvents(ctx context.Context, sm *socketmode.Client, done <-chan error) error {
	for {
		select {
		case err := <-done:
			return err
		case evt := <-sm.Events:
			switch evt.Type {
			case socketmode.EventTypeConnected:
				a.log.Info().Msg("socket mode connected")
			case socketmode.EventTypeConnectionError:
				a.log.Warn().Msg("socket mode connection failed; retrying")
			case socketmode.EventTypeEventsAPI:
				a.ack(sm, evt)
				if ev, ok := evt.Data.(slackevents.EventsAPIEvent); ok && ev.Type == slackevents.CallbackEvent {
					a.handle(ctx, func(ctx context.Context) note { return a.onEvent(ctx, ev) })
				}
			case socketmode.EventTypeInteractive:
				if ic, ok := evt.Data.(slack.InteractionCallback); ok && ic.Type == slack.InteractionTypeViewSubmission {
					// A modal's errors ride on the ack itself, so the
					// answer is taken before acking, within the budget,
					// on its own goroutine: the next envelopes are read
					// and acked meanwhile.
					a.submit(ctx, sm, evt, ic)
					continue
				}
				a.ack(sm, evt)
				if ic, ok := evt.Data.(slack.InteractionCallback); ok {
					if c, ok := clickOf(ic); ok {
						a.handle(ctx, func(ctx context.Context) note {
							return note{channel: c.channel, user: c.user, text: a.onClick(ctx, c)}
						})
					}
				}
			case socketmode.EventTypeSlashCommand:
				a.ack(sm, evt) // none are registered; acknowledge so Slack does not retry
			case socketmode.EventTypeErrorBadMessage:
				a.ackUnreadable(sm, evt)
			}
		}
	}
}

func (a *Adapter) ack(sm *socketmode.Client, evt socketmode.Event) {
	if evt.Request == nil {
		return
	}
	if err := sm.Ack(*evt.Request); err != nil {
		a.log.Warn().Err(err).Msg("socket mode ack failed")
	}
}

// ackUnreadable acknowledges an envelope the SDK could not read (an
// event type it does not know, a field of a shape it did not expect),
// which the SDK hands over unacknowledged: Slack would send it again and
// again, to be read no better, each time counted as a failure of the app.
func (a *Adapter) ackUnreadable(sm *socketmode.Client, evt socketmode.Event) {
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
	a.ack(sm, socketmode.Event{Request: &socketmode.Request{EnvelopeID: env.EnvelopeID}})
}

// handle runs f on its own goroutine, within handleBudget.
func (a *Adapter) handle(ctx context.Context, f func(context.Context) note) {
	a.spawn(ctx, func() {
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handleBudget)
		defer cancel()
		a.queueNote(f(hctx))
	})
}

// spawn runs f on its own goroutine, at most cap(a.sema) at once, counted
// in a.work; when all are busy it waits, which slows reading and, at worst,
// makes Slack retry (retries are recognised by their event id).
func (a *Adapter) spawn(ctx context.Context, f func()) {
	select {
	case a.sema <- struct{}{}:
	case <-ctx.Done():
		return
	}
	a.work.Go(func() {
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
// (its errors, or nothing to close it). The answer is taken off the read
// loop, so a slow one never holds up later acks past Slack's 3 s. Its
// budget runs from arrival: waiting for a free slot comes out of it.
func (a *Adapter) submit(ctx context.Context, sm *socketmode.Client, evt socketmode.Event, ic slack.InteractionCallback) {
	deadline := time.Now().Add(a.opts.AckBudget)
	a.spawn(ctx, func() {
		hctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		resp, n := a.onSubmit(hctx, ic)
		cancel()
		if evt.Request != nil {
			var payload any // nil, not a nil *ViewSubmissionResponse: that would ack "payload": null
			if resp != nil {
				payload = resp
			}
			// Bounded by the connection's life: once the client stops,
			// nothing drains its responses and a plain Ack could block
			// this goroutine, and the shutdown waiting for it, for good.
			if err := sm.AckCtx(ctx, evt.Request.EnvelopeID, payload); err != nil {
				a.log.Warn().Err(err).Msg("socket mode ack failed")
			}
		}
		a.queueNote(n)
	})
}
