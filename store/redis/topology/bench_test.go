package topology_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// BenchmarkDurableAnswer measures what durable acknowledgements cost an
// answer through core on a primary with one replica behind Sentinel: off,
// and waiting for the replica (WAIT; the local server predates WAITAOF).
// Parallel callers, so the figure includes what durability takes away
// from batching as well as the wait itself.
func BenchmarkDurableAnswer(b *testing.B) {
	ss := redistest.StartSentinels(b, 1)
	d := redisstore.Dial{Topology: redisstore.Sentinel, URL: ss.URL()}
	for _, bc := range []struct {
		name string
		d    redisstore.Durability
	}{
		{"off", redisstore.Durability{}},
		{"replicas=1", redisstore.Durability{Replicas: 1, Timeout: time.Second}},
	} {
		for _, callers := range []int{1, 50} {
			b.Run(fmt.Sprintf("%s/callers=%d", bc.name, callers), func(b *testing.B) {
				st, err := redisstore.Connect(b.Context(), d, redisstore.Options{Prefix: randomPrefix(), Durability: bc.d})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				svc := coretest.Service(b, st, coretest.Options{})
				ids := make([]core.QuestionID, b.N)
				for i := range ids {
					q, err := svc.Ask(b.Context(), core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "run-bench",
						ToolCallID: fmt.Sprintf("call-%d", i), Text: "Which region?", Reversibility: core.HardToReverse})
					if err != nil {
						b.Fatal(err)
					}
					ids[i] = q.ID
				}
				var next atomic.Int64
				b.SetParallelism(max(1, callers/2)) // 2 cores here: GOMAXPROCS x this callers
				b.ResetTimer()
				if callers == 1 {
					for _, id := range ids {
						answer(b, svc, id)
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						answer(b, svc, ids[next.Add(1)-1])
					}
				})
			})
		}
	}
}

func answer(b *testing.B, svc *core.Service, id core.QuestionID) {
	if _, err := svc.Answer(b.Context(), core.AnswerInput{QuestionID: id,
		Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}, Text: "eu-west-1"}); err != nil {
		b.Error(err)
	}
}
