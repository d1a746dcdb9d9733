package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
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
// (thread replies). An event Slack retries is handled once.
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
		n := a.onEvent(ctx, ev)
		cancel()
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
// returns the private note to send, if any.
func (a *Adapter) onEvent(ctx context.Context, ev slackevents.EventsAPIEvent) note {
	me, ok := ev.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok {
		a.log.Debug().Str("type", ev.InnerEvent.Type).Msg("event ignored: not a message")
		return note{}
	}
	rep, ok := a.replyOf(me)
	if !ok {
		if rev, ok := a.revisionOf(me); ok {
			// Marked only once a note is due, as below.
			if text := a.onRevision(ctx, rev); text != "" && a.firstSeen(ctx, ev) {
				return note{channel: rev.channel, user: rev.user, threadTS: rev.threadTS, text: text}
			}
			return note{}
		}
		if user, ok := a.dmMessageOf(me); ok {
			// Told once, however often Slack sends it.
			if a.firstSeen(ctx, ev) {
				return note{channel: me.Channel, user: user, text: notInThread}
			}
			return note{}
		}
		a.log.Debug().Str("subtype", me.SubType).Msg("message event ignored: not a person's reply in a thread of ours")
		return note{}
	}
	// Slack retries an event it thinks was not acked; whichever replica
	// gets the retry, the event is handled once. Only a reply that may
	// count is marked: every other message in every channel the bot is
	// in would cost a store write (a disk sync on the embedded store)
	// before its ack, and a key kept for an hour.
	if !a.firstSeen(ctx, ev) {
		return note{}
	}
	return note{channel: rep.channel, user: rep.user, threadTS: rep.threadTS, text: a.onReply(ctx, rep)}
}

// firstSeen marks ev handled and reports whether no replica had yet:
// false for an event Slack sent again.
func (a *Adapter) firstSeen(ctx context.Context, ev slackevents.EventsAPIEvent) bool {
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok || cb.EventID == "" || a.svc.FirstSeen(ctx, "slack:event:"+cb.EventID, time.Hour) {
		return true
	}
	a.log.Debug().Str("event", cb.EventID).Msg("event ignored: already handled")
	return false
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
