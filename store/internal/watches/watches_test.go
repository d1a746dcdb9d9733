package watches

import (
	"slices"
	"testing"

	"github.com/askbridge/askbridge/core"
)

func TestChanHoldsOneSignalForMany(t *testing.T) {
	var s Set
	ch, stop := s.Chan("q1")
	defer stop()
	s.Signal("q1")
	s.Signal("q1") // does not block: one pending signal stands for both
	s.Signal("q2") // another question's
	select {
	case <-ch:
	default:
		t.Fatal("no signal after Signal")
	}
	select {
	case <-ch:
		t.Fatal("a second signal for one pending")
	default:
	}
}

func TestFuncIsCalledAtEachSignalUntilStopped(t *testing.T) {
	var s Set
	n := 0
	stop := s.Func("q1", func() { n++ })
	s.Signal("q1")
	s.Signal("q1")
	s.SignalAll()
	stop()
	s.Signal("q1")
	s.SignalAll()
	if n != 3 {
		t.Fatalf("called %d times, want 3", n)
	}
}

func TestFirstAndLastFollowTheWatches(t *testing.T) {
	var s Set
	var got []string
	s.First = func(id core.QuestionID) { got = append(got, "first "+string(id)) }
	s.Last = func(id core.QuestionID) { got = append(got, "last "+string(id)) }
	_, stopA := s.Chan("q1")
	stopB := s.Func("q1", func() {})
	_, stopC := s.Chan("q2")
	stopA()
	stopA() // again: nothing more
	stopB()
	stopB()
	_, stopD := s.Chan("q1")
	stopC()
	stopD()
	want := []string{"first q1", "first q2", "last q1", "first q1", "last q2", "last q1"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestSignalAllTellsEveryQuestion(t *testing.T) {
	var s Set
	a, stopA := s.Chan("q1")
	b, stopB := s.Chan("q2")
	defer stopA()
	defer stopB()
	s.SignalAll()
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Fatal("a watch missed SignalAll")
		}
	}
}
