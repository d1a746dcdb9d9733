package eventstream_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/eventstream"
	"github.com/askbridge/askbridge/core"
)

// memLog is an event log in memory that a test appends to.
type memLog struct {
	mu    sync.Mutex
	evs   []core.Event
	reads int
	fail  error
	// failFrom, when set, is the first read that fails.
	failFrom int
}

func (l *memLog) add(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range n {
		l.evs = append(l.evs, core.Event{Seq: int64(len(l.evs) + 1), QuestionID: "q", Kind: core.EventAsked})
	}
}

func (l *memLog) read(_ context.Context, since int64, limit int) ([]core.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	if l.fail != nil {
		return nil, l.fail
	}
	if l.failFrom > 0 && l.reads >= l.failFrom {
		return nil, errors.New("store down")
	}
	var out []core.Event
	for _, e := range l.evs {
		if e.Seq > since && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func writeID(w *bufio.Writer, e core.Event) bool {
	_, _ = w.WriteString("id: " + strconv.FormatInt(e.Seq, 10) + "\ndata: x\n\n")
	return true
}

// serve streams l with o from since, reading the first batch as a door
// does, and returns the response's lines as they come.
func serve(t *testing.T, l *memLog, since int64, o eventstream.Options) <-chan string {
	t.Helper()
	if o.Draining == nil {
		o.Draining = context.Background()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		evs, err := l.read(r.Context(), since, eventstream.Batch)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		eventstream.Serve(w, r, l.read, since, evs, o)
	}))
	t.Cleanup(srv.Close)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	lines := make(chan string, 4096)
	go func() {
		defer resp.Body.Close()
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() != "" {
				lines <- sc.Text()
			}
		}
	}()
	return lines
}

func all(lines <-chan string) []string {
	var out []string
	for l := range lines {
		out = append(out, l)
	}
	return out
}

// TestWhatTheLogHoldsInBatches: without following, the stream is every
// event after since, in order, read a batch at a time, and then ends.
func TestWhatTheLogHoldsInBatches(t *testing.T) {
	l := &memLog{}
	l.add(2*eventstream.Batch + 7)
	got := all(serve(t, l, 3, eventstream.Options{Write: writeID}))
	var ids []string
	for _, line := range got {
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) != 2*eventstream.Batch+4 || ids[0] != "4" || ids[len(ids)-1] != strconv.Itoa(2*eventstream.Batch+7) {
		t.Fatalf("%d ids, from %v to %v", len(ids), ids[0], ids[len(ids)-1])
	}
	if l.reads != 3 {
		t.Fatalf("%d reads of the log, want 3 (the first, two more after full batches)", l.reads)
	}
}

// TestSkippedEventsStillMoveTheClient: a batch whose last event says
// nothing ends with an id line, so a reconnect does not ask for it again;
// retry comes first and ready once the stream has caught up.
func TestSkippedEventsStillMoveTheClient(t *testing.T) {
	l := &memLog{}
	l.add(4)
	skipEven := func(w *bufio.Writer, e core.Event) bool {
		if e.Seq%2 == 0 {
			return false
		}
		return writeID(w, e)
	}
	lines := serve(t, l, 0, eventstream.Options{Write: skipEven, Retry: 1500 * time.Millisecond, Ready: true,
		Follow: true, Poll: time.Hour, KeepAlive: time.Hour})
	want := []string{"retry: 1500", "id: 1", "data: x", "id: 3", "data: x", "id: 4", "event: ready", "data: {}"}
	for i, w := range want {
		if got := <-lines; got != w {
			t.Fatalf("line %d: %q, want %q", i, got, w)
		}
	}
}

// TestFollowing: a following stream carries what is appended later, says
// it is alive while the log is quiet, and ends when the server drains.
func TestFollowing(t *testing.T) {
	l := &memLog{}
	drain, stop := context.WithCancel(context.Background())
	defer stop()
	lines := serve(t, l, 0, eventstream.Options{Write: writeID, Follow: true, Poll: time.Millisecond, KeepAlive: 5 * time.Millisecond, Draining: drain})
	until(t, lines, ": keep-alive")
	l.add(2)
	until(t, lines, "id: 2")
	stop()
	for range lines { // the response ends
	}
}

// TestAFailedReadEndsTheStream: a read that fails after the stream began
// is reported and ends the response.
func TestAFailedReadEndsTheStream(t *testing.T) {
	l := &memLog{}
	l.add(1)
	failed := make(chan error, 1)
	lines := serve(t, l, 0, eventstream.Options{Write: writeID, Follow: true, Poll: time.Millisecond, KeepAlive: time.Hour,
		Failed: func(err error) { failed <- err }})
	until(t, lines, "id: 1")
	l.mu.Lock()
	l.fail = errors.New("store down")
	l.mu.Unlock()
	for range lines {
	}
	if err := <-failed; err == nil || err.Error() != "store down" {
		t.Fatalf("failed with %v", err)
	}
}

// TestAStreamEndsWhenItsCallerNoLongerHolds: Still is asked after every
// read and before its events or a keep-alive go out; once it says no, the
// response ends, and what the log gained meanwhile is never sent.
func TestAStreamEndsWhenItsCallerNoLongerHolds(t *testing.T) {
	l := &memLog{}
	l.add(1)
	var mu sync.Mutex
	holds, asked := true, 0
	lines := serve(t, l, 0, eventstream.Options{Write: writeID, Follow: true, Poll: time.Millisecond, KeepAlive: 5 * time.Millisecond,
		Still: func(ctx context.Context) bool {
			if ctx == nil {
				t.Error("Still was given no context")
			}
			mu.Lock()
			defer mu.Unlock()
			asked++
			return holds
		}})
	until(t, lines, "id: 1")
	until(t, lines, ": keep-alive")
	mu.Lock()
	holds = false
	mu.Unlock()
	l.add(1) // appended after the caller stopped holding
	for line := range lines {
		if line == "id: 2" {
			t.Fatal("the stream sent an event read after its caller stopped holding")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if asked < 3 {
		t.Fatalf("Still was asked %d times, want it on every poll", asked)
	}
}

func until(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	for line := range lines {
		if line == want {
			return
		}
	}
	t.Fatalf("the stream ended before %q", want)
}

func TestSince(t *testing.T) {
	for _, c := range []struct {
		query, header string
		want          int64
		what          string
		ok            bool
	}{
		{"", "", 0, "", true},
		{"since=7", "", 7, "", true},
		{"since=7", "9", 9, "", true},
		{"since=-1", "", 0, `since "-1"`, false},
		{"since=x", "", 0, `since "x"`, false},
		{"since=7", "abc", 0, `the Last-Event-ID header "abc"`, false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/?"+c.query, nil)
		if c.header != "" {
			r.Header.Set("Last-Event-ID", c.header)
		}
		n, what, ok := eventstream.Since(r)
		if ok != c.ok || (ok && n != c.want) || (!ok && what != c.what) {
			t.Errorf("%q %q: %d %q %v", c.query, c.header, n, what, ok)
		}
	}
}

// TestAStreamThatDoesNotFollowIsAbortedWhenCutShort: without following,
// a stream whose next read fails, or whose caller stops holding, after a
// page has gone out is aborted rather than ended, since a clean end tells
// the client it has the whole log. Before, "askbridge events" printed the
// first page and exited 0.
func TestAStreamThatDoesNotFollowIsAbortedWhenCutShort(t *testing.T) {
	for name, cutShort := range map[string]func(*memLog, *eventstream.Options){
		"the next read fails": func(l *memLog, _ *eventstream.Options) { l.failFrom = 2 },
		"the caller no longer holds": func(_ *memLog, o *eventstream.Options) {
			asked := 0
			o.Still = func(context.Context) bool { asked++; return asked == 1 }
		},
	} {
		t.Run(name, func(t *testing.T) {
			l := &memLog{}
			l.add(eventstream.Batch + 1)
			o := eventstream.Options{Write: writeID, Draining: context.Background()}
			cutShort(l, &o)
			evs, _ := l.read(t.Context(), 0, eventstream.Batch)
			w := httptest.NewRecorder()
			defer func() {
				if p := recover(); p != http.ErrAbortHandler {
					t.Fatalf("the stream cut short ended with %v (%d bytes sent), want it aborted", p, w.Body.Len())
				}
				if !strings.Contains(w.Body.String(), "id: "+strconv.Itoa(eventstream.Batch)+"\n") {
					t.Fatal("the first page did not go out before the abort")
				}
			}()
			eventstream.Serve(w, httptest.NewRequest(http.MethodGet, "/", nil), l.read, 0, evs, o)
		})
	}
}

// TestAHEADIsAnsweredAtOnce: a HEAD gets the stream's status and headers
// and its handler returns, following or not; before, a following stream
// with nothing to send held its handler (and polled the log) until its
// first keep-alive failed to write, for headers it had already sent.
func TestAHEADIsAnsweredAtOnce(t *testing.T) {
	l := &memLog{}
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		evs, _ := l.read(r.Context(), 0, eventstream.Batch)
		eventstream.Serve(w, r, l.read, 0, evs, eventstream.Options{Write: writeID, Follow: true, Poll: time.Millisecond,
			KeepAlive: time.Hour, Draining: context.Background()})
	}))
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Head(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("HEAD: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the HEAD's handler is still following the log")
	}
}
