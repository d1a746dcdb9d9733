// Package watches holds the stores' watch sets: who watches which
// question, each told of a change without blocking, through a channel
// that holds one signal (core.Watcher's Watch) or by a call
// (core.Store's WatchFunc). Both stores keep one; what differs is
// only when they signal, which stays with each store.
package watches

import (
	"sync"

	"github.com/askbridge/askbridge/core"
)

// Set is the watches of each question. Its zero value is ready to use.
type Set struct {
	// First and Last, when set, are called with the set's lock held when
	// a question gains its first watch and when it loses its last (the
	// Redis store keeps what it learns of a question only while it is
	// watched). Set them before the first watch.
	First, Last func(core.QuestionID)

	mu sync.Mutex
	m  map[core.QuestionID]map[*watch]struct{}
}

// watch is one watch: a channel to signal, or a function to call.
type watch struct {
	ch chan struct{}
	fn func()
}

// Chan returns a channel that receives after each Signal of id (one
// pending signal stands for any number: a waiter slow to look sees one,
// never none), and a function to stop watching.
func (s *Set) Chan(id core.QuestionID) (<-chan struct{}, func()) {
	w := &watch{ch: make(chan struct{}, 1)}
	return w.ch, s.add(id, w)
}

// Func calls wake at each Signal of id, with the set's lock held, until
// the function it returns is called.
func (s *Set) Func(id core.QuestionID, wake func()) func() {
	return s.add(id, &watch{fn: wake})
}

// add adds w to id's watches and returns the function that removes it,
// which may be called more than once.
func (s *Set) add(id core.QuestionID, w *watch) func() {
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[core.QuestionID]map[*watch]struct{})
	}
	set := s.m[id]
	if set == nil {
		set = make(map[*watch]struct{})
		s.m[id] = set
		if s.First != nil {
			s.First(id)
		}
	}
	set[w] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		set := s.m[id]
		if _, ok := set[w]; !ok {
			return
		}
		delete(set, w)
		if len(set) == 0 {
			delete(s.m, id)
			if s.Last != nil {
				s.Last(id)
			}
		}
	}
}

// Signal tells every watch of id.
func (s *Set) Signal(id core.QuestionID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.m[id] {
		w.signal()
	}
}

// SignalAll tells every watch of every question.
func (s *Set) SignalAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, set := range s.m {
		for w := range set {
			w.signal()
		}
	}
}

func (w *watch) signal() {
	if w.fn != nil {
		w.fn()
		return
	}
	select {
	case w.ch <- struct{}{}:
	default: // a signal is pending already; one is enough
	}
}
