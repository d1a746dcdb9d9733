package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// commentSpy passes requests on, and reports each SSE comment line of
// the responses to tools/call POSTs: what a proxy in between would see
// of a call while it waits.
type commentSpy struct {
	next     http.RoundTripper
	comments chan string
}

func (s *commentSpy) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	res, err := s.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost && bytes.Contains(body, []byte(`"tools/call"`)) {
		res.Body = &commentReader{ReadCloser: res.Body, comments: s.comments}
	}
	return res, err
}

// commentReader reports the lines starting with ":" as they are read.
type commentReader struct {
	io.ReadCloser
	line     []byte
	comments chan<- string
}

func (c *commentReader) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	for _, b := range p[:n] {
		if b != '\n' {
			c.line = append(c.line, b)
			continue
		}
		if bytes.HasPrefix(c.line, []byte(":")) {
			select {
			case c.comments <- string(c.line):
			default:
			}
		}
		c.line = c.line[:0]
	}
	return n, err
}

// TestSilentWaitKeepsItsStreamAlive: a blocking call from a client that
// gave no progress token still sends something on its response stream
// every wait slice, from the start (headers included), as SSE comments,
// which every SSE reader skips: a proxy's idle timeout (60 s on nginx or
// an ALB) sees a live stream, and the client sees nothing but the
// result. Both eras over HTTP.
func TestSilentWaitKeepsItsStreamAlive(t *testing.T) {
	for name, version := range map[string]*mcpsdk.ClientSessionOptions{"2026-07-28": current, "2025-11-25": legacy} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			svc := newService(t)
			r := newReplicas(t, svc, 1, mcp.Options{WaitSlice: 20 * time.Millisecond, Caller: agentOf})
			spy := &commentSpy{next: &balancer{r: r, token: "tok-alice"}, comments: make(chan string, 64)}
			cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "quiet-client", Version: "1"}, nil).
				Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: r.urls[0].String(), HTTPClient: &http.Client{Transport: spy}, MaxRetries: -1}, version)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				cancel() // a call still pending (a failed test) would hold Close up
				_ = cs.Close()
			}()
			out := callOn(ctx, cs, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
				"question": "Quiet?", "reversibility": "reversible"}})
			q := waitParked(t, ctx, svc)
			bound, stop := context.WithTimeout(ctx, 10*time.Second)
			defer stop()
			for range 2 {
				select {
				case c := <-spy.comments:
					if !strings.HasPrefix(c, ":") {
						t.Fatalf("comment %q", c)
					}
				case r := <-out:
					t.Fatalf("the call returned before the answer: %+v, %v", r.res, r.err)
				case <-bound.Done():
					t.Fatal("nothing reached the client while the call waited")
				}
			}
			if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, Text: "yes"}); err != nil {
				t.Fatal(err)
			}
			resumed(t, result(t, ctx, out), q.ID, fence.VerbAnswered)
		})
	}
}
