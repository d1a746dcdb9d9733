package slack

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// note is a private message to one person, sent after the request that
// caused it was acknowledged.
type note struct {
	channel, user, threadTS, text string
}

// noteSenders is how many notes go out at once: chat.postEphemeral is a
// Tier 4 method, so a burst of clicks is answered in parallel. Notes
// still leave far slower than a team's burst of clicks comes in (each is
// a Web API call, about 100 ms from Slack), so they queue, and queueing
// one never waits: a click's acknowledgement must not wait behind other
// clicks' notes (issue 31).
const noteSenders = 8

// maxQueuedNotes bounds one sender's queue. A note beyond it is dropped
// and logged: at Slack's pace the queue already holds minutes of notes.
const maxQueuedNotes = 4096

// noteQueue is one sender's notes, in the order they were queued.
type noteQueue struct {
	mu      sync.Mutex
	pending []note
	ready   chan struct{} // holds a token while pending may be non-empty
}

func newNoteQueues() []*noteQueue {
	qs := make([]*noteQueue, noteSenders)
	for i := range qs {
		qs[i] = &noteQueue{ready: make(chan struct{}, 1)}
	}
	return qs
}

// push adds n at the end, at once; false if the queue is full.
func (q *noteQueue) push(n note) bool {
	q.mu.Lock()
	full := len(q.pending) >= maxQueuedNotes
	if !full {
		q.pending = append(q.pending, n)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default: // a token is there already
	}
	return !full
}

// take waits for notes and returns all that are queued, oldest first;
// nil once ctx ends.
func (q *noteQueue) take(ctx context.Context) []note {
	for {
		q.mu.Lock()
		ns := q.pending
		q.pending = nil
		q.mu.Unlock()
		if len(ns) > 0 {
			return ns
		}
		select {
		case <-ctx.Done():
			return nil
		case <-q.ready:
		}
	}
}

// queueNote hands n to its sender and returns at once: the request that
// caused it is answered without waiting for any note to go out.
func (a *Adapter) queueNote(n note) {
	if n.text == "" || n.user == "" || n.channel == "" {
		return
	}
	if !a.notes[noteQueueOf(n.user)].push(n) {
		a.log.Warn().Msg("private note not sent: too many notes wait to go out")
	}
}

// noteQueueOf is the queue of a user's notes: always the same one, so one
// person's notes arrive in the order they were written.
func noteQueueOf(user string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(user))
	return int(h.Sum32() % noteSenders)
}

// sendNotes sends q's notes, in order, until ctx ends.
func (a *Adapter) sendNotes(ctx context.Context, q *noteQueue) {
	for {
		ns := q.take(ctx)
		if ns == nil {
			return
		}
		for _, n := range ns {
			if ctx.Err() != nil {
				return
			}
			a.sendNote(ctx, n)
		}
	}
}

// maxNoteTries bounds how often one note is sent while Slack answers 429:
// a note still refused after that many waits is dropped and logged.
// maxNoteWait bounds one wait: a note is a click's or a reply's feedback,
// worth little minutes later, and the person's later notes wait behind
// it, so one Slack asks to hold for longer is dropped and logged.
const (
	maxNoteTries = 5
	maxNoteWait  = time.Minute
)

// sendNote sends n. On a 429 it waits the Retry-After Slack asked for
// (up to maxNoteWait) and sends n again, so the notes queued behind it
// wait too rather than being sent into the limit and dropped in turn.
func (a *Adapter) sendNote(ctx context.Context, n note) {
	m := Note(n.text)
	opts := []slack.MsgOption{slack.MsgOptionText(m.Text, false), slack.MsgOptionBlocks(m.Blocks...)}
	if n.threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(n.threadTS))
	}
	for try := 1; ; try++ {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := a.api.PostEphemeralContext(cctx, n.channel, n.user, opts...)
		cancel()
		if err == nil || ctx.Err() != nil {
			return
		}
		rl, limited := errors.AsType[*slack.RateLimitedError](err)
		if !limited || try == maxNoteTries || rl.RetryAfter > maxNoteWait {
			a.log.Warn().Err(err).Msg("private note not sent")
			return
		}
		// Retry-After is whole seconds; 0 (or none) still waits one.
		t := time.NewTimer(max(rl.RetryAfter, time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
