package coretest

import (
	"context"
	"sync"

	"github.com/askbridge/askbridge/core"
)

// StallStore is a store whose first read of one question, once armed,
// fails (as a store failing over fails it) or does not end until Free
// (the replica reading it died there, as a kill -9 leaves it): the doors'
// redelivery tests use it to leave an inbound event in hand.
type StallStore struct {
	core.Store
	// Deaf makes a stalled read ignore its context too, as a replica
	// that died mid-read never hears of it; otherwise the context ends
	// the read.
	Deaf bool

	mu      sync.Mutex
	id      core.QuestionID
	fail    error
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// NewStallStore wraps st.
func NewStallStore(st core.Store) *StallStore {
	return &StallStore{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
}

// Arm makes the next read of id fail with err or, with err nil, stall
// until Free.
func (s *StallStore) Arm(id core.QuestionID, err error) {
	s.mu.Lock()
	s.id, s.fail = id, err
	s.mu.Unlock()
}

// Entered is closed once the armed read has begun.
func (s *StallStore) Entered() <-chan struct{} { return s.entered }

// Free lets a stalled read go on.
func (s *StallStore) Free() { s.once.Do(func() { close(s.release) }) }

func (s *StallStore) Get(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	s.mu.Lock()
	armed, fail := s.id != "" && s.id == id, s.fail
	if armed {
		s.id = ""
	}
	s.mu.Unlock()
	if armed {
		close(s.entered)
		if fail != nil {
			return nil, fail
		}
		if s.Deaf {
			<-s.release
		} else {
			select {
			case <-s.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return s.Store.Get(ctx, id)
}
