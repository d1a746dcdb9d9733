package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/askbridge/askbridge/adapters/internal/apierror"
	"github.com/askbridge/askbridge/core"
)

// Paths of the HTTP endpoints, to configure in the Slack app as the Event
// Subscriptions request URL and the Interactivity request URL.
const (
	EventsPath        = "/slack/events"
	InteractivityPath = "/slack/interactivity"
)

// maxBody bounds what a Slack request may send us.
const maxBody = 1 << 20

// Mount adds the Events API and Interactivity endpoints when a signing
// secret is configured; without one the adapter takes Socket Mode only
// and mounts nothing.
func (a *Adapter) Mount(mux *http.ServeMux) {
	if a.opts.SigningSecret == "" {
		return
	}
	mux.HandleFunc("POST "+EventsPath, a.serveEvents)
	mux.HandleFunc("POST "+InteractivityPath, a.serveInteractivity)
}

// verified reads the body of a request and checks Slack's signature over
// it, with the five-minute window on the timestamp. Anything else gets a
// 401 and is never looked at further.
func (a *Adapter) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, ok := apierror.ReadBody(w, r, maxBody)
	if !ok {
		return nil, false
	}
	sv, err := slack.NewSecretsVerifier(r.Header, a.opts.SigningSecret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		a.log.Debug().Err(err).Msg("refused an unsigned or stale request")
		apierror.Write(w, http.StatusUnauthorized, core.CodeForbidden, "invalid signature")
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// serveInteractivity takes a button press: core is called before the
// answer (it is quick), the private note is sent after.
func (a *Adapter) serveInteractivity(w http.ResponseWriter, r *http.Request) {
	if _, ok := a.verified(w, r); !ok {
		return
	}
	ic, err := slack.InteractionCallbackParse(r)
	if err != nil {
		apierror.Write(w, http.StatusBadRequest, core.CodeInvalid, "not an interaction payload")
		return
	}
	if ic.Type == slack.InteractionTypeViewSubmission {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), a.opts.AckBudget)
		resp, n := a.onSubmit(ctx, ic)
		cancel()
		if resp != nil {
			writeJSON(w, resp)
		} else {
			w.WriteHeader(http.StatusOK)
		}
		a.queueNote(n)
		return
	}
	c, ok := clickOf(ic)
	if !ok {
		w.WriteHeader(http.StatusOK)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), a.opts.AckBudget)
	text := a.onClick(ctx, c)
	cancel()
	w.WriteHeader(http.StatusOK)
	a.queueNote(note{channel: c.channel, user: c.user, text: text})
}

// serveEvents takes Events API callbacks: the URL check, and messages
// (thread replies). An event is handled before it is answered, so that
// one whose handling never finished (a replica that died with it) or
// failed on the store is answered with an error, or not at all, and
// Slack sends it again (retriesLeft); an event Slack retries is handled
// once (sight).
func (a *Adapter) serveEvents(w http.ResponseWriter, r *http.Request) {
	body, ok := a.verified(w, r)
	if !ok {
		return
	}
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil && isCallback(body) {
		// Signed, so Slack's: an event the SDK cannot read (a type it
		// does not know, a field of a shape it did not expect) is
		// acknowledged and left. Refused, it would come back three
		// times, each a failure of the app's events URL, and Slack
		// turns off the event subscriptions of an app whose URL fails
		// most of what it is sent, thread replies and all.
		a.log.Warn().Err(err).Msg("event ignored: not readable")
		w.WriteHeader(http.StatusOK)
		return
	}
	if err != nil {
		apierror.Write(w, http.StatusBadRequest, core.CodeInvalid, "not an Events API payload")
		return
	}
	switch ev.Type {
	case slackevents.URLVerification:
		var v slackevents.EventsAPIURLVerificationEvent
		if err := json.Unmarshal(body, &v); err != nil {
			apierror.Write(w, http.StatusBadRequest, core.CodeInvalid, "bad url_verification")
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, v.Challenge)
		return
	case slackevents.CallbackEvent:
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), a.opts.AckBudget)
		n, done := a.onEvent(ctx, ev, func() bool { return retriesLeft(r) })
		cancel()
		if !done {
			// Slack sends an event again that it got no 2xx for, a
			// minute later and then five: by then a dead replica's
			// claim on it has lapsed (seenHold), and a store that
			// failed it may answer.
			apierror.Write(w, http.StatusServiceUnavailable, core.CodeInternal, "the event is not handled yet; send it again")
			return
		}
		w.WriteHeader(http.StatusOK)
		a.queueNote(n)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// isCallback reports whether body is an Events API event_callback by its
// outer type alone, whatever the event inside it.
func isCallback(body []byte) bool {
	var outer struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(body, &outer) == nil && outer.Type == slackevents.CallbackEvent
}

// onEvent handles one Events API callback, from either transport, and
// returns the private note to send, if any, and whether the event is
// done with. One that is not (another handling has it in hand, or, when
// retry says Slack will send it again, its handling failed on the store)
// is left for Slack to send again: over HTTP, an event answered with an
// error; over Socket Mode, one not acknowledged. retry is asked only of
// a handling that failed so, once it has: over Socket Mode, an event
// acknowledged meanwhile (its handling ran past the ack budget) comes no
// more, and its failure is told to its writer.
func (a *Adapter) onEvent(ctx context.Context, ev slackevents.EventsAPIEvent, retry func() bool) (note, bool) {
	me, ok := ev.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok {
		a.log.Debug().Str("type", ev.InnerEvent.Type).Msg("event ignored: not a message")
		return note{}, true
	}
	rep, ok := a.replyOf(me)
	if !ok {
		if rev, ok := a.revisionOf(me); ok {
			// Marked only once a note is due, as below.
			text := a.onRevision(ctx, rev)
			if text == "" {
				return note{}, true
			}
			return a.once(ctx, ev, retry, func() (note, error) {
				return note{channel: rev.channel, user: rev.user, threadTS: rev.threadTS, text: text}, nil
			})
		}
		if user, ok := a.dmMessageOf(me); ok {
			// Told once, however often Slack sends it.
			return a.once(ctx, ev, retry, func() (note, error) {
				return note{channel: me.Channel, user: user, text: notInThread}, nil
			})
		}
		a.log.Debug().Str("subtype", me.SubType).Msg("message event ignored: not a person's reply in a thread of ours")
		return note{}, true
	}
	// Slack retries an event it thinks was not acked; whichever replica
	// gets the retry, the event is handled once. Only a reply that may
	// count is marked: every other message in every channel the bot is
	// in would cost a store write (a disk sync on the embedded store)
	// before its ack, and a key kept for an hour.
	return a.once(ctx, ev, retry, func() (note, error) {
		text, err := a.onReply(ctx, rep)
		return note{channel: rep.channel, user: rep.user, threadTS: rep.threadTS, text: text}, err
	})
}

// seenHold is how long an event's claim lasts while it is handled
// (once): past the budgets of its handling (AckBudget over HTTP,
// handleBudget over Socket Mode), and under the minute after which Slack
// sends again an event it got no 2xx for, so a copy that meets the claim
// of a replica that died with it (and is answered 503) is handled at
// Slack's next try.
const seenHold = 30 * time.Second

// seenFor is how long an event handled is known as such: Slack's last
// retry comes five minutes after its first try.
const seenFor = time.Hour

// once runs handle for ev under a claim on its event id (core.Service
// .Sight), unless the event was handled before (done with, dropped) or
// another handling has it in hand (not done with). A handling that
// failed on the store (core.HandleAgain) while retry says Slack will
// send the event again releases its claim, its writer told nothing, so
// that the next copy is handled; anything else is confirmed handled, and
// its note sent.
func (a *Adapter) once(ctx context.Context, ev slackevents.EventsAPIEvent, retry func() bool, handle func() (note, error)) (note, bool) {
	g := core.Sighting{State: core.OnceClaimed} // no id: nothing to claim
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if ok && cb.EventID != "" {
		g = a.svc.Sight(ctx, "slack:event:"+cb.EventID, seenHold, seenFor)
	}
	switch g.State {
	case core.OnceDone:
		a.log.Debug().Str("event", cb.EventID).Msg("event ignored: already handled")
		return note{}, true
	case core.OnceHeld:
		a.log.Debug().Str("event", cb.EventID).Msg("event not handled yet: another handling has it in hand")
		return note{}, false
	}
	n, err := handle()
	if core.HandleAgain(err) && retry() {
		a.log.Info().Err(err).Msg("event not handled: its handling failed; it is left for Slack to send again")
		g.Unhandled(ctx)
		return note{}, false
	}
	g.Handled(ctx)
	return n, true
}

// maxRetries is how often Slack sends again an event it got no 2xx
// (over Socket Mode, no ack) for: at once, a minute later and five
// minutes later, numbering each retry in X-Slack-Retry-Num (over Socket
// Mode, in the envelope's retry_attempt).
const maxRetries = 3

// retriesLeft reports whether Slack will send r's event again should it
// get no 2xx for it: r is not its last retry.
func retriesLeft(r *http.Request) bool {
	n, err := strconv.Atoi(r.Header.Get("X-Slack-Retry-Num"))
	return err != nil || n < maxRetries
}

// writeJSON answers an interaction with a body Slack acts on (a modal's
// errors).
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
