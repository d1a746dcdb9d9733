package app_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestCLIWaitOnABridgeNeverReachedFails: `askbridge wait` at a URL where
// no bridge answers (a wrong URL, a bridge that is down) tries as an ask
// does, then fails with exit 10 (the bridge not reached, as every
// command says it), saying the bridge cannot be reached, and says
// nothing of a question it never saw staying open. Before, it retried
// in silence for ever, and when stopped said the question stayed open.
func TestCLIWaitOnABridgeNeverReachedFails(t *testing.T) {
	app.SetRetryPause(t, time.Millisecond)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	// Each connection is dropped at once; past a few more than an ask's
	// tries, the wait is stopped, as a person would stop it.
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			if conns.Add(1) >= 8 {
				stop()
			}
		}
	}()
	url := "http://" + ln.Addr().String()
	code, out, errb := runAll(ctx, hookEnv(url), "", "wait", "a2gj3hgdnifvtftln")
	if code != app.ExitUnreachable || !strings.Contains(errb, "askbridge at "+url+" cannot be reached") || strings.Contains(errb, "stays open") || ctx.Err() != nil {
		t.Errorf("wait with no bridge: exit %d, stdout %q, stderr %q, stopped %v; want exit %d, the bridge unreachable, no question said to stay open", code, out, errb, ctx.Err() != nil, app.ExitUnreachable)
	}
}

// TestCLIWaitSaysOnceWhenTheBridgeIsDown: a wait on a question the
// bridge has says, once per outage and not once per retry, that the
// bridge cannot be reached and it goes on waiting, and when it is
// reached again; then it gets the answer. Before, it said nothing.
func TestCLIWaitSaysOnceWhenTheBridgeIsDown(t *testing.T) {
	app.SetRetryPause(t, time.Millisecond)
	polls := []string{"drop", "503", "drop", "open", "drop", "drop", "answered"}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/questions/q1" {
			_, _ = w.Write([]byte(`{"id":"q1","state":"open"}`))
			return
		}
		i := int(n.Add(1)) - 1
		switch polls[min(i, len(polls)-1)] {
		case "drop":
			panic(http.ErrAbortHandler)
		case "503":
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"the store is failing over"}}`))
		case "open":
			_, _ = w.Write([]byte(`{"question_id":"q1","state":"open","question":{}}`))
		default:
			_, _ = w.Write([]byte(`{"question_id":"q1","state":"answered","resume":{"content":"eu-west-1","structured":{}},"question":{}}`))
		}
	}))
	t.Cleanup(srv.Close)
	code, out, errb := runAll(t.Context(), hookEnv(srv.URL), "", "wait", "q1")
	if code != app.ExitAnswered {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the answer", code, out, errb)
	}
	down, up := strings.Count(errb, "cannot be reached"), strings.Count(errb, "is reached again")
	if down != 2 || up != 2 || !strings.Contains(errb, "still waiting on q1") {
		t.Errorf("stderr %q: %d words of the bridge down and %d of it back; want 2 of each, one per outage", errb, down, up)
	}
}
