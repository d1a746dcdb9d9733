package httpapi_test

// Benchmarks of the figures. They run only with -bench (never in
// plain `go test`); see BENCHMARKS.md for the commands.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/benchstore"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/procmem"
	"github.com/askbridge/askbridge/store/bolt"
)

// benchEnv is the API over a store on a real listener, with an HTTP
// client that keeps a connection per parked waiter.
type benchEnv struct {
	url string // the API's base URL
	// watching receives a question's id each time a wait starts watching
	// it, so a benchmark knows when its waiters are parked.
	watching <-chan core.QuestionID
	hc       *http.Client
	// bridge is the process the API runs in when it runs apart from the
	// benchmark's clients (startBridge); nil when it runs in this one.
	bridge *bridgeProcess
}

func newBenchEnv(b *testing.B, noSync bool, watchBuf int) *benchEnv {
	b.Helper()
	st, err := bolt.Open(filepath.Join(b.TempDir(), "askbridge.db"), bolt.Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return newBenchEnvOn(b, st, watchBuf)
}

// newBenchEnvOn is the API over st on a real listener.
func newBenchEnvOn(b *testing.B, st core.Store, watchBuf int) *benchEnv {
	b.Helper()
	ws := &watchedStore{Store: st, watching: make(chan core.QuestionID, watchBuf)}
	svc := coretest.Service(b, ws, coretest.Options{})
	api, err := httpapi.New(svc, httpapi.Options{Tokens: tokens, Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(api)
	srv.Listener = api.Listener(srv.Listener) // as the program serves it
	srv.Start()
	b.Cleanup(srv.Close)
	return &benchEnv{url: srv.URL, watching: ws.watching, hc: benchClient(b)}
}

// benchClient is an HTTP client that keeps a connection per parked waiter.
func benchClient(b *testing.B) *http.Client {
	tr := &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: time.Minute}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// post sends a JSON body as tok and fails on any status but want.
func (e *benchEnv) post(tb testing.TB, path string, tok httpapi.Token, body []byte, want int) []byte {
	req, _ := http.NewRequest("POST", e.url+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok.Secret)
	resp, err := e.hc.Do(req)
	if err != nil {
		tb.Error(err)
		return nil
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		tb.Errorf("POST %s: %d %s", path, resp.StatusCode, out)
	}
	return out
}

// benchAsks numbers the benchmark's asks: each is a new tool call, so
// none is taken for a repeat of another (asks are idempotent per agent,
// run and tool call id).
var benchAsks atomic.Int64

// benchAsk is the body of a new ask.
func benchAsk() []byte {
	b, _ := json.Marshal(client.AskRequest{
		Kind: core.KindClarification, Question: "Which database should the service use?",
		Reversibility: core.Reversible, RunID: "bench-run", ToolCallID: "toolu_" + strconv.FormatInt(benchAsks.Add(1), 10),
		Timeout: client.Duration(time.Hour),
	})
	return b
}

func (e *benchEnv) ask(tb testing.TB) core.QuestionID {
	var q core.Question
	if err := json.Unmarshal(e.post(tb, "/v1/questions", agentA, benchAsk(), 201), &q); err != nil {
		tb.Fatal(err)
	}
	return q.ID
}

// benchWaiters is how many long polls stay parked while answers are timed;
// ASKBRIDGE_BENCH_WAITERS overrides it.
func benchWaiters() int {
	if n, err := strconv.Atoi(os.Getenv("ASKBRIDGE_BENCH_WAITERS")); err == nil && n > 0 {
		return n
	}
	return 1000
}

// BenchmarkAnswerToWake times, for each answer, the span from sending the
// answer POST until the long poll parked on that question has returned
// its response, with benchWaiters() long polls parked throughout (each
// answered waiter is replaced by a fresh one, untimed). It reports the
// 50th and 99th percentiles and the worst.
func BenchmarkAnswerToWake(b *testing.B) {
	for _, mode := range []struct {
		name   string
		noSync bool
	}{{"fsync", false}, {"nosync", true}} {
		b.Run(mode.name, func(b *testing.B) { benchAnswerToWake(b, mode.noSync) })
	}
}

func benchAnswerToWake(b *testing.B, noSync bool) {
	n := benchWaiters()
	e := newBenchEnv(b, noSync, n+16)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()

	woke := map[string]chan time.Time{}
	var mu sync.Mutex
	park := func() string {
		id := e.ask(b)
		ch := make(chan time.Time, 1)
		mu.Lock()
		woke[string(id)] = ch
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/v1/questions/"+string(id)+"/wait?timeout=5m", nil)
			req.Header.Set("Authorization", "Bearer "+agentA.Secret)
			resp, err := e.hc.Do(req)
			if err != nil {
				return // cancelled at the end
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ch <- time.Now()
		}()
		return string(id)
	}
	awaitParked := func(want int) {
		for range want {
			<-e.watching
		}
	}
	queue := make([]string, 0, n)
	for range n {
		queue = append(queue, park())
	}
	awaitParked(n)

	answer := []byte(`{"answer":"Postgres"}`)
	lat := make([]time.Duration, 0, b.N)  // answer sent -> long poll returned
	post := make([]time.Duration, 0, b.N) // answer sent -> answer's own response
	b.ResetTimer()
	for range b.N {
		id := queue[0]
		queue = queue[1:]
		t0 := time.Now()
		e.post(b, "/v1/questions/"+id+"/answer", operator, answer, 200)
		post = append(post, time.Since(t0))
		mu.Lock()
		ch := woke[id]
		delete(woke, id)
		mu.Unlock()
		lat = append(lat, (<-ch).Sub(t0))

		b.StopTimer()
		queue = append(queue, park())
		awaitParked(1)
		b.StartTimer()
	}
	b.StopTimer()
	pct := func(d []time.Duration, p float64) float64 {
		return float64(d[min(len(d)-1, int(p*float64(len(d))))].Microseconds())
	}
	slices.Sort(lat)
	slices.Sort(post)
	b.ReportMetric(pct(lat, 0.50), "p50-µs")
	b.ReportMetric(pct(lat, 0.99), "p99-µs")
	b.ReportMetric(pct(lat, 1), "max-µs")
	// The answer's own round trip (most of it the store's commit), to
	// tell the commit from the wake-up in the figures above.
	b.ReportMetric(pct(post, 0.50), "answer-p50-µs")
	b.ReportMetric(pct(post, 0.99), "answer-p99-µs")
	b.ReportMetric(float64(n), "parked")
}

// BenchmarkAskHTTP is asks per second through HTTP, from 50 parallel
// clients, each ask a full POST /v1/questions (auth, decode, validate, one
// store transaction, encode).
func BenchmarkAskHTTP(b *testing.B) {
	for _, mode := range []struct {
		name   string
		noSync bool
	}{{"fsync", false}, {"nosync", true}} {
		b.Run(mode.name, func(b *testing.B) {
			e := newBenchEnv(b, mode.noSync, 1)
			var asked atomic.Int64
			procs := runtime.GOMAXPROCS(0)
			b.SetParallelism((50 + procs - 1) / procs)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					e.post(b, "/v1/questions", agentA, benchAsk(), 201)
					asked.Add(1)
				}
			})
			b.ReportMetric(float64(asked.Load())/time.Since(start).Seconds(), "asks/s")
		})
	}
}

// noteWatch is any store that calls note each time a waiter starts
// watching a question, so a benchmark knows when its waiters are parked.
type noteWatch struct {
	core.Store
	note func(core.QuestionID)
}

func (s *noteWatch) Watch(id core.QuestionID) (<-chan struct{}, func()) {
	ch, stop := s.Store.Watch(id)
	s.note(id)
	return ch, stop
}

// WatchFunc is the store's own (core.Store.WatchFunc), noted as Watch is.
func (s *noteWatch) WatchFunc(id core.QuestionID, wake func()) func() {
	stop := s.Store.WatchFunc(id, wake)
	s.note(id)
	return stop
}

// BenchmarkParkedWaiters measures what one parked long poll costs the
// process: benchWaiters() questions are asked first (they are data, not
// waiters), then as many long polls are parked on them, each on its own
// raw TCP connection whose client side holds no goroutine and no buffer,
// so nearly all that is measured is the server's. It reports, per waiter,
// the growth of the Go heap in use, of goroutine stacks, and of the
// resident set (anonymous and file-backed pages, from /proc/self/status),
// on the embedded store (fsync) and on Redis; and the resident set's
// growth counted from before the questions were asked. ASKBRIDGE_BENCH_HEAPPROFILE
// names a file for a heap profile taken while they are parked.
func BenchmarkParkedWaiters(b *testing.B) { benchstore.Each(b, benchParked) }

func benchParked(b *testing.B, st core.Store) {
	n := benchWaiters()
	ctx := context.Background()
	watching := make(chan core.QuestionID, n)
	ws := &noteWatch{Store: st, note: func(id core.QuestionID) { watching <- id }}
	svc := coretest.Service(b, ws, coretest.Options{})
	api, err := httpapi.New(svc, httpapi.Options{Tokens: tokens, Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	for range b.N {
		start := memNow()
		ids := make([]core.QuestionID, n)
		for i := range ids {
			q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: agentA.Agent(), RunID: "bench-run",
				Text: "Which database should the service use?", Reversibility: core.Reversible, Timeout: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = q.ID
		}
		before := memNow()
		conns := make([]net.Conn, 0, n)
		for _, id := range ids {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "GET /v1/questions/%s/wait?timeout=5m HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer %s\r\n\r\n", id, agentA.Secret)
			conns = append(conns, c)
		}
		for range n {
			<-watching
		}
		after := memNow()
		if path := os.Getenv("ASKBRIDGE_BENCH_HEAPPROFILE"); path != "" {
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.WriteHeapProfile(f); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		per := func(a, b int64) float64 { return float64(b-a) / float64(n) }
		b.ReportMetric(per(before.heap, after.heap), "heap-B/waiter")
		b.ReportMetric(per(before.stack, after.stack), "stack-B/waiter")
		b.ReportMetric(per(before.anon, after.anon), "rss-anon-B/waiter")
		b.ReportMetric(per(before.file, after.file), "rss-file-B/waiter")
		b.ReportMetric(per(before.heap+before.stack, after.heap+after.stack), "go-B/waiter")
		// The same from before the questions were asked: what a waiter
		// and its question's data cost together (the file-backed pages
		// of the embedded store are mostly the file itself).
		b.ReportMetric(per(start.anon+start.file, after.anon+after.file), "rss-B/asked+waiter")
		b.ReportMetric(per(start.file, after.file), "rss-file-B/asked+waiter")
		for _, c := range conns {
			c.Close()
		}
	}
}

type memSample struct{ heap, stack, anon, file int64 }

// memNow collects garbage and samples the heap in use, the stacks and the
// resident set.
func memNow() memSample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := memSample{heap: int64(ms.HeapInuse), stack: int64(ms.StackInuse)}
	m.anon, m.file = procmem.Resident()
	return m
}

// BenchmarkAnswerHTTP is answers per second through HTTP from 50 parallel
// operators, each answer a full POST /v1/questions/{id}/answer (auth,
// decode, the chokepoint, encode) of a question asked beforehand.
func BenchmarkAnswerHTTP(b *testing.B) {
	benchstore.Each(b, func(b *testing.B, st core.Store) {
		e := newBenchEnvOn(b, st, 1)
		ids := make(chan core.QuestionID, b.N)
		for range b.N {
			ids <- e.ask(b)
		}
		close(ids)
		answer := []byte(`{"answer":"Postgres"}`)
		procs := runtime.GOMAXPROCS(0)
		b.SetParallelism((50 + procs - 1) / procs)
		b.ResetTimer()
		start := time.Now()
		var answered atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				e.post(b, "/v1/questions/"+string(<-ids)+"/answer", operator, answer, 200)
				answered.Add(1)
			}
		})
		b.ReportMetric(float64(answered.Load())/time.Since(start).Seconds(), "answers/s")
	})
}
