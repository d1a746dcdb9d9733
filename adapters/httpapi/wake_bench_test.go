package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/benchstore"
)

// warm opens c's connection with a read of question id.
func warm(b *testing.B, e *benchEnv, c *http.Client, id core.QuestionID) {
	req, _ := http.NewRequest("GET", e.url+"/v1/questions/"+string(id), nil)
	req.Header.Set("Authorization", "Bearer "+operator.Secret)
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// answerWith answers question id with c, within ctx, and fails on any
// status but 200.
func (e *benchEnv) answerWith(b *testing.B, ctx context.Context, c *http.Client, id core.QuestionID) {
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/questions/"+string(id)+"/answer", strings.NewReader(`{"answer":"Postgres"}`))
	req.Header.Set("Authorization", "Bearer "+operator.Secret)
	resp, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Errorf("answer %s: %d", id, resp.StatusCode)
	}
}

// BenchmarkConcurrentWake parks benchWaiters() long polls, then 50
// operators answer all of them at once, each on a connection of their
// own; it reports, per question, the span from its answer's first byte
// out to its long poll returning. The bridge runs in a process of its own
// (startBridge), as it would beside its clients; it reports the CPU of
// the bridge ("cpu-bridge-%"), of the clients ("cpu-self-%") and of
// Redis during the answers.
//
// Its yardstick, measured in the same run: after each burst, the same
// burst against bareAPI in a process of its own ("bare-p50-ms",
// "bare-p99-ms"), and the bridge's p99 over the bare server's ("x-bare").
func BenchmarkConcurrentWake(b *testing.B) {
	benchstore.EachEnv(b, func(b *testing.B, env benchstore.Env) {
		n := benchWaiters()
		e := startBridge(b, env, n+16)
		bs := startBare(b, n+16)
		var lat, post, after, bareLat []time.Duration
		b.StopTimer()
		for range b.N {
			l, p, a := wakeBurst(b, e, n, func() func() {
				stopProfile := e.bridge.profile(b)
				cpu := benchstore.StartCPU(b, env, e.bridge.process())
				b.StartTimer()
				return func() {
					b.StopTimer()
					cpu.Report(b)
					stopProfile()
				}
			})
			lat, post, after = append(lat, l...), append(post, p...), append(after, a...)
			l, _, _ = wakeBurst(b, bs, n, func() func() { return func() {} })
			bareLat = append(bareLat, l...)
		}
		for _, d := range [][]time.Duration{lat, post, after, bareLat} {
			slices.Sort(d)
		}
		b.ReportMetric(benchstore.Millis(lat, 0.50), "p50-ms")
		b.ReportMetric(benchstore.Millis(lat, 0.99), "p99-ms")
		// Where the time goes: the answer's own POST (the close), and from
		// its response to the waiter's (the wake-up; negative when the
		// waiter had its response first).
		b.ReportMetric(benchstore.Millis(post, 0.50), "answer-p50-ms")
		b.ReportMetric(benchstore.Millis(post, 0.99), "answer-p99-ms")
		b.ReportMetric(benchstore.Millis(after, 0.50), "wake-after-p50-ms")
		b.ReportMetric(benchstore.Millis(after, 0.99), "wake-after-p99-ms")
		b.ReportMetric(benchstore.Millis(bareLat, 0.50), "bare-p50-ms")
		b.ReportMetric(benchstore.Millis(bareLat, 0.99), "bare-p99-ms")
		b.ReportMetric(benchstore.Millis(lat, 0.99)/benchstore.Millis(bareLat, 0.99), "x-bare")
		b.ReportMetric(float64(n), "waiters")
	})
}

// wakeBurst parks n long polls on e, answers them all from 50 operators
// at once and returns, per question, the span from its answer's first
// byte out to its long poll returning (lat), to its answer's response
// (post), and from that response to the long poll's (after). timing is
// called as the answers start; what it returns, as they end.
func wakeBurst(b *testing.B, e *benchEnv, n int, timing func() (stop func())) (lat, post, after []time.Duration) {
	ids := make([]core.QuestionID, n)
	woke := make([]chan time.Time, n)
	var wg sync.WaitGroup
	for i := range n {
		ids[i], woke[i] = e.ask(b), make(chan time.Time, 1)
		wg.Go(func() {
			req, _ := http.NewRequest("GET", e.url+"/v1/questions/"+string(ids[i])+"/wait?timeout=5m", nil)
			req.Header.Set("Authorization", "Bearer "+agentA.Secret)
			resp, err := e.hc.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			woke[i] <- time.Now()
		})
	}
	for range n {
		<-e.watching
	}
	// Each answerer has a connection of its own, opened before the
	// clock starts (as each person's client would have), and each
	// answer is timed from its first byte out: a dial, or a wait for
	// another answerer's connection, is not the bridge's.
	people := benchstore.NewPeople(50)
	defer people.Close()
	for k, c := range people {
		warm(b, e, c, ids[k])
	}
	stop := timing()
	sent, answered := make([]time.Time, n), make([]time.Time, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var answerers sync.WaitGroup
	for _, c := range people {
		answerers.Go(func() {
			for i := range next {
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
					GotConn: func(httptrace.GotConnInfo) { sent[i] = time.Now() },
				})
				e.answerWith(b, ctx, c, ids[i])
				answered[i] = time.Now()
			}
		})
	}
	answerers.Wait()
	wg.Wait()
	stop()
	for i := range n {
		w := <-woke[i]
		lat = append(lat, w.Sub(sent[i]))
		post = append(post, answered[i].Sub(sent[i]))
		after = append(after, w.Sub(answered[i]))
	}
	return lat, post, after
}
