package core

import (
	"context"
	"sync/atomic"
)

// Get returns a question. A malformed id reads as an unknown one.
func (s *Service) Get(ctx context.Context, id QuestionID) (*Question, error) {
	if !ValidID(id) {
		return nil, ErrNotFound
	}
	q, err := s.store.Get(ctx, id)
	if err != nil {
		if ErrorCode(err) == CodeNotFound {
			return nil, ErrNotFound
		}
		return nil, Internal("get", err)
	}
	return s.counted(q), nil
}

// Wait blocks until the question is closed or ctx ends, and returns the
// question as it then stands (open if ctx ended first). It is woken by the
// store, never by polling.
func (s *Service) Wait(ctx context.Context, id QuestionID) (*Question, error) {
	w, err := s.Watch(id)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	if q, err := w.Read(ctx); err != nil || !q.Open() || ctx.Err() != nil {
		return q, err
	}
	return w.Wait(ctx)
}

// Watcher is one waiter's hold on a question, for a caller that parks the
// wait itself (the HTTP API hands a long poll's connection to a goroutine
// of its own rather than keep net/http's). It keeps the rule that makes a
// wait safe: the store's watch is taken before the question is read, so a
// close between the read and the park still wakes it. A Watcher is for one
// goroutine at a time; the parked-waiters gauge counts it until Stop.
type Watcher struct {
	s       *Service
	id      QuestionID
	changed <-chan struct{}
	stop    func()
	unpark  func() // ends the park observePark counted
	sawOpen bool   // a read has seen the question open: a close now is a wake
	// The store calls fire on a change (Store.WatchFunc), which signals
	// own (changed) or, once Notify has set notify, calls it.
	own    chan struct{}
	notify atomic.Pointer[func()]
}

// Watch starts watching question id. Read it next: a change from now on
// is never missed. A malformed id reads as an unknown one.
func (s *Service) Watch(id QuestionID) (*Watcher, error) {
	if !ValidID(id) {
		return nil, ErrNotFound
	}
	w := &Watcher{s: s, id: id, own: make(chan struct{}, 1)}
	w.changed, w.stop = w.own, s.store.WatchFunc(id, w.fire)
	w.unpark = s.observePark()
	return w, nil
}

// fire is the store's call on a change: Notify's function once set, else
// a signal on Changed (one pending signal is enough).
func (w *Watcher) fire() {
	if f := w.notify.Load(); f != nil {
		(*f)()
		return
	}
	select {
	case w.own <- struct{}{}:
	default:
	}
}

// Notify has every change from now on call wake rather than signal
// Changed, and calls it at once if a change is pending; call it once,
// before Stop. wake runs on the store's goroutine (Store.WatchFunc's
// rules: it must return at once and not call the store), so a waiter
// parked without a goroutine of its own (a taken long poll, blocked in its
// connection's read) is still told.
func (w *Watcher) Notify(wake func()) {
	w.notify.Store(&wake)
	select {
	case <-w.own: // a change came before wake was set
		wake()
	default:
	}
}

// Changed receives after any change to the question since the last
// receive (or since Watch); Read tells what changed.
func (w *Watcher) Changed() <-chan struct{} { return w.changed }

// Read returns the question as it stands. A caller whose deadline has
// already passed still gets it, so it reads with a context that has not
// ended. A close seen after an open one counts as a wake.
func (w *Watcher) Read(ctx context.Context) (*Question, error) {
	if ctx.Err() != nil {
		ctx = context.WithoutCancel(ctx)
	}
	q, err := w.s.Get(ctx, w.id)
	w.s.observeWake(q, w.sawOpen)
	w.sawOpen = err == nil && q.Open()
	return q, err
}

// Wait, after a Read that saw the question open, blocks until a change
// shows it closed or ctx ends, and returns the question as it then stands.
// The caller's deadline is not an error: the question is then returned
// still open.
func (w *Watcher) Wait(ctx context.Context) (*Question, error) {
	for {
		select {
		case <-w.changed:
		case <-ctx.Done():
		}
		q, err := w.Read(ctx)
		if err != nil || !q.Open() || ctx.Err() != nil {
			return q, err
		}
	}
}

// Stop ends the watch; calling it again does nothing.
func (w *Watcher) Stop() {
	if w.stop == nil {
		return
	}
	w.stop()
	w.stop = nil
	w.unpark()
}

// ListOpen lists open questions, hard-to-reverse first, then oldest first.
func (s *Service) ListOpen(ctx context.Context, cursor string, limit int) ([]*Question, string, error) {
	switch {
	case limit <= 0:
		limit = 50
	case limit > 500:
		limit = 500 // a page, not a dump: callers follow the cursor
	}
	qs, next, err := s.store.ListOpen(ctx, cursor, limit)
	if err != nil {
		if ErrorCode(err) == CodeInvalid {
			return nil, "", err
		}
		return nil, "", Internal("list", err)
	}
	for i, q := range qs {
		qs[i] = s.counted(q)
	}
	return qs, next, nil
}

// Events returns events after seq since.
func (s *Service) Events(ctx context.Context, since int64, limit int) ([]Event, error) {
	switch {
	case limit <= 0:
		limit = 100
	case limit > 1000:
		limit = 1000
	}
	ev, err := s.store.Events(ctx, since, limit)
	return ev, Internal("events", err)
}
