package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// failing fails every read of one question with err.
type failing struct {
	mcp.ServiceBackend
	id  core.QuestionID
	err error
}

func (f *failing) Wait(ctx context.Context, id core.QuestionID, d time.Duration) (mcp.Status, error) {
	if id == f.id {
		return mcp.Status{}, f.err
	}
	return f.ServiceBackend.Wait(ctx, id, d)
}

// errRefused is a store's error for a server out of reach, unmarked: only
// the store's own function (Options.Unavailable) tells it for one.
var errRefused = errors.New("redis get: dial tcp 127.0.0.1:6379: connect: connection refused")

// TestTaskMethodOnAStoreUnavailable: a task method that meets a store
// failing over, or out of reach, is an error that says so (core's
// caller-safe words, as a tool's caller is told), and tells the log; an
// error of any other kind stays "internal error", its detail in the log
// only. Before, both were "internal error".
func TestTaskMethodOnAStoreUnavailable(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	id := asTask(t, must(t)(alice.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": "Which?", "reversibility": "reversible"}))).TaskID
	storeSays := func(err error) bool { return errors.Is(err, errRefused) }
	for _, c := range []struct {
		name        string
		err         error
		unavailable func(error) bool
		want, log   string
	}{
		{"marked", fmt.Errorf("redis get: %w", core.ErrUnavailable), nil, core.UnavailableMessage, "level=WARN msg=\"askbridge mcp: the store is unavailable\""},
		{"the store's word", errRefused, storeSays, core.UnavailableMessage, "level=WARN msg=\"askbridge mcp: the store is unavailable\""},
		{"broken", errors.New("a script's bug"), storeSays, "internal error", "level=ERROR msg=\"askbridge mcp: task method failed\" err=\"a script's bug\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log logBuffer
			b := &failing{ServiceBackend: mcp.ServiceBackend{Svc: e.svc}, id: core.QuestionID(id), err: c.err}
			hs := httptest.NewServer(authenticate(mcp.HTTPHandler(b, mcp.Options{Caller: agentOf, Unavailable: c.unavailable,
				Logger: slog.New(slog.NewTextHandler(&log, nil))})))
			defer hs.Close()
			u, _ := url.Parse(hs.URL)
			h := &taskClient{t: t, http: &http.Client{Transport: &balancer{r: &replicas{urls: []*url.URL{u}}, token: "tok-alice"}}, url: hs.URL, caps: tasksCaps(false)}
			for _, call := range []func() error{
				func() error { _, err := h.get(e.ctx, id); return err },
				func() error { return h.cancel(e.ctx, id) },
			} {
				var re *rpcError
				if err := call(); !errors.As(err, &re) || re.Code != -32603 || re.Message != c.want {
					t.Errorf("got %v, want -32603 %q", err, c.want)
				}
			}
			if l := log.String(); !strings.Contains(l, c.log) {
				t.Errorf("logged %q, want %s", l, c.log)
			}
		})
	}
}
