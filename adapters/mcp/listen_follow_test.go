package mcp_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// unreadable fails every read of one question after the first, as a
// store shard that stays unreachable would.
type unreadable struct {
	mcp.ServiceBackend
	id    core.QuestionID
	reads atomic.Int32
}

func (u *unreadable) Wait(ctx context.Context, id core.QuestionID, d time.Duration) (mcp.Status, error) {
	if id == u.id && u.reads.Add(1) > 1 {
		return mcp.Status{}, &mcp.UnavailableError{Message: "shard down"}
	}
	return u.ServiceBackend.Wait(ctx, id, d)
}

// TestTaskListenEndsWhenATaskCannotBeFollowed: a listen stream that can
// no longer follow one of its tasks (its reads keep failing) ends,
// without the listen's response, so that the host listens again; the
// other task still open is no reason to keep it. Before, the follower of
// that task gave up alone and the stream stayed open, sending keep-alive
// comments and never the task's end.
func TestTaskListenEndsWhenATaskCannotBeFollowed(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	ask := func(q string) string {
		return asTask(t, must(t)(alice.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": q, "reversibility": "reversible"}))).TaskID
	}
	lost, open := ask("A?"), ask("B?")
	b := &unreadable{ServiceBackend: mcp.ServiceBackend{Svc: e.svc}, id: core.QuestionID(lost)}
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(b, mcp.Options{Caller: agentOf, WaitSlice: 10 * time.Millisecond})))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	c := &taskClient{t: t, http: &http.Client{Transport: &balancer{r: &replicas{urls: []*url.URL{u}}, token: "tok-alice"}}, url: hs.URL, caps: tasksCaps(false)}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second) // a stream left open is cut here
	defer cancel()
	res, _, err := c.post(ctx, "subscriptions/listen", "", map[string]any{"notifications": map[string]any{"taskIds": []string{lost, open}}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	var data []string
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "data:") {
			data = append(data, l)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("the stream stayed open after its follower of task %s gave up (%d reads)", lost, b.reads.Load())
	}
	if len(data) != 1 || !strings.Contains(data[0], "notifications/subscriptions/acknowledged") || !strings.Contains(data[0], lost) {
		t.Errorf("the stream sent %q, want its acknowledgement alone", data)
	}
}
