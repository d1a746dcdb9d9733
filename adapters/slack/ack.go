package slack

import (
	"context"
	"sync"
	"time"

	"github.com/slack-go/slack/socketmode"
)

// heldAck is the acknowledgement of one Socket Mode envelope (a click, an
// event), held back until the envelope is handled: the answer in the
// store before Slack, and through it the clicker, hears that it counted,
// as over HTTP, where the 200 follows the handling.
//
// Slack's side of it: an envelope acknowledged is one Slack is done
// with. An events_api envelope it hears nothing for within 3 s is sent
// again as a new envelope numbered in retry_attempt (retry_reason
// "timeout"), up to 3 times, as over HTTP (Slack support's answer quoted
// in slackapi/python-slack-sdk#1280, citing api.slack.com
// /apis/connections/socket-implement#acknowledge and the Events API's
// failure conditions; envelopes logged with retry_attempt 1-3 in
// slackapi/python-slack-events-api#93; events sent while no connection
// was up come only as such retries, vercel/chat#666). An interactive
// one (a click) is, as far as any source says, not sent again: Slack
// "registers a timeout error" after 3 s (docs.slack.dev/tools
// /bolt-python/concepts/acknowledge), shown to the clicker as an error
// mark beside the button (mbakgun/n8n-slack-socket-mode#5). So
// acknowledged on arrival, a click or reply whose handling then died
// with the replica (a deploy's kill) was lost silently; held back, the
// reply comes again, and the click shows its error and is clicked again.
//
// A handling that runs past the budget (a slow store, a slow Slack, a
// wait for a free handler) has its envelope acknowledged then, within
// Slack's 3 s, so that Slack neither shows an error for a click that
// will count nor sends the event again at once and counts the app
// failing; the handling goes on, and an event's claim (once) still
// recognises a copy Slack sent anyway. Only then, past the budget, is a
// crash a loss, as it is over HTTP for a handling cut off there.
type heldAck struct {
	mu    sync.Mutex
	state ackState
	timer *time.Timer
	send  func()
	owed  *owedAcks // its connection's, paid once it is sent or given up
}

// ackState is where a held ack stands.
type ackState int

const (
	ackWaiting  ackState = iota // neither sent nor given up yet
	ackSent                     // sent: Slack sends the envelope no more
	ackWithheld                 // given up: Slack sends an event again
)

// holdAck returns evt's acknowledgement, held back until done or
// withhold, or sent by itself once the ack budget has passed from now
// (the envelope's arrival). It is owed on its connection until then.
func (a *Adapter) holdAck(ctx context.Context, sm *socketmode.Client, evt socketmode.Event, owed *owedAcks) *heldAck {
	owed.add()
	h := &heldAck{send: func() { a.ack(ctx, sm, evt) }, owed: owed}
	h.mu.Lock() // the timer's call reads h.timer
	h.timer = time.AfterFunc(a.opts.AckBudget, func() {
		if _, now := h.settle(ackSent); now {
			a.log.Debug().Msg("socket mode envelope acknowledged before it was handled: its handling ran past the ack budget")
		}
	})
	h.mu.Unlock()
	return h
}

// done sends the ack of an envelope whose handling has ended, unless the
// budget's end sent it already (or it was withheld).
func (h *heldAck) done() { h.settle(ackSent) }

// withhold gives up the ack of an envelope left for Slack to send again,
// and reports whether it is given up: not if it was sent already, at the
// budget's end, in which case Slack sends the envelope no more.
func (h *heldAck) withhold() bool {
	st, _ := h.settle(ackWithheld)
	return st == ackWithheld
}

// settle moves a waiting ack to to, sending it for ackSent, and returns
// where the ack stands and whether this call moved it.
func (h *heldAck) settle(to ackState) (ackState, bool) {
	h.mu.Lock()
	if h.state != ackWaiting {
		defer h.mu.Unlock()
		return h.state, false
	}
	h.state = to
	t := h.timer
	h.mu.Unlock()
	t.Stop() // from the timer's own call, a no-op
	if to == ackSent {
		h.send()
	}
	h.owed.paid()
	return to, true
}

// owedAcks counts the acks one Socket Mode connection owes: envelopes
// taken whose ack waits on their handling (heldAck, a modal's response).
// A stopping adapter keeps the connection up until none is owed
// (drainAcks): closed at once, a click recorded by a handler still at
// work could no longer be acknowledged, and Slack would show its clicker
// an error mark for a click that counted.
type owedAcks struct {
	mu   sync.Mutex
	n    int
	none chan struct{} // closed when n falls to 0; nil while no one waits
}

func (o *owedAcks) add() {
	o.mu.Lock()
	o.n++
	o.mu.Unlock()
}

func (o *owedAcks) paid() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n--
	if o.n == 0 && o.none != nil {
		close(o.none)
		o.none = nil
	}
}

// owing returns how many acks are owed now and a channel closed once
// none is (nil if none is now).
func (o *owedAcks) owing() (int, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == 0 {
		return 0, nil
	}
	if o.none == nil {
		o.none = make(chan struct{})
	}
	return o.n, o.none
}
