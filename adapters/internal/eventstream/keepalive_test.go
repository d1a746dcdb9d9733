package eventstream_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/eventstream"
	"github.com/askbridge/askbridge/core"
)

// sent is a ResponseWriter that notes when each write reached it, on the
// bubble's clock.
type sent struct {
	mu     sync.Mutex
	header http.Header
	at     []time.Time // the headers, then every write
	what   []string
}

func (s *sent) Header() http.Header { return s.header }
func (s *sent) Flush()              {}

func (s *sent) WriteHeader(int) { s.note("") }

func (s *sent) Write(p []byte) (int, error) {
	s.note(string(p))
	return len(p), nil
}

func (s *sent) note(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at, s.what = append(s.at, time.Now()), append(s.what, what)
}

// TestKeepAliveGoesByElapsedTime: on a quiet log whose every read takes a
// second, a keep-alive still goes out about every KeepAlive, not every
// KeepAlive/Poll passes: before, the stream counted a pass as Poll
// whatever the read had taken, so with the doors' 250 ms poll and 15 s
// keep-alive it fell silent for 75 s, and a proxy that cuts idle
// connections at 30 s cut a healthy stream.
func TestKeepAliveGoesByElapsedTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			poll, keepAlive = 250 * time.Millisecond, 15 * time.Second
			readTakes       = time.Second
		)
		slow := func(ctx context.Context, since int64, limit int) ([]core.Event, error) {
			select {
			case <-time.After(readTakes):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return nil, nil
		}
		drain, stop := context.WithCancel(context.Background())
		w := &sent{header: http.Header{}}
		done := make(chan struct{})
		go func() {
			defer close(done)
			eventstream.Serve(w, httptest.NewRequest(http.MethodGet, "/", nil), slow, 0, nil, eventstream.Options{
				Write: writeID, Follow: true, Poll: poll, KeepAlive: keepAlive, Draining: drain})
		}()
		<-time.After(2 * time.Minute)
		stop()
		<-done

		w.mu.Lock()
		defer w.mu.Unlock()
		alive := 0
		for i := 1; i < len(w.at); i++ {
			if !strings.Contains(w.what[i], ": keep-alive") {
				continue
			}
			alive++
			// Quiet for KeepAlive at least, and at most one pass (a wait
			// and a read) more.
			if gap := w.at[i].Sub(w.at[i-1]); gap < keepAlive || gap > keepAlive+poll+readTakes {
				t.Errorf("keep-alive %d went out %s after the write before it; want %s to %s", alive, gap, keepAlive, keepAlive+poll+readTakes)
			}
		}
		if want := int(2*time.Minute/(keepAlive+poll+readTakes)) - 1; alive < want {
			t.Fatalf("%d keep-alives in two quiet minutes, want %d or more", alive, want)
		}
	})
}
