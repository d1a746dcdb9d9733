package core

import "context"

// Get returns a question. A malformed id reads as an unknown one.
func (s *Service) Get(ctx context.Context, id string) (*Question, error) {
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
	return q, nil
}

// Wait blocks until the question is closed or ctx ends, and returns the
// question as it then stands (open if ctx ended first). It is woken by the
// store, never by polling.
func (s *Service) Wait(ctx context.Context, id string) (*Question, error) {
	if !ValidID(id) {
		return nil, ErrNotFound
	}
	ch, stop := s.store.Watch(id)
	defer stop()
	defer s.observePark()()
	for sawOpen := false; ; sawOpen = true {
		// A caller whose deadline has already passed still gets the
		// question as it stands, so read with a context that has not ended.
		readCtx := ctx
		if ctx.Err() != nil {
			readCtx = context.WithoutCancel(ctx)
		}
		q, err := s.Get(readCtx, id)
		s.observeWake(q, sawOpen)
		if err != nil || !q.Open() || ctx.Err() != nil {
			return q, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			// The caller's deadline is not an error: report the question
			// as it stands, read with a fresh context.
			return s.Get(context.WithoutCancel(ctx), id)
		}
	}
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
