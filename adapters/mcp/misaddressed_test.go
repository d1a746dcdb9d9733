package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// wrongAddresses are the API client's real failures at addresses no retry
// mends (a host DNS does not know, https:// at plain HTTP, http:// at
// TLS), each handed on as `askbridge mcp`'s backend hands it on: inside an
// *UnavailableError whose message names ASKBRIDGE_URL. DNS is answered by
// the test's dialer, so no resolver is asked.
func wrongAddresses(t *testing.T) map[string]error {
	t.Helper()
	unknownHost := &http.Client{Transport: &http.Transport{DialContext: func(_ context.Context, network, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}}}
	server := func(tls bool) string {
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Errorf("a request reached the server: %s %s", r.Method, r.URL)
		}))
		s.Config.ErrorLog = log.New(io.Discard, "", 0) // the wrong scheme's handshakes are logged otherwise
		if tls {
			s.StartTLS()
		} else {
			s.Start()
		}
		t.Cleanup(s.Close)
		return s.Listener.Addr().String()
	}
	faults := map[string]error{}
	for name, c := range map[string]*client.Client{
		"a host DNS does not know": client.New("http://askbrigde.internal:8080", "t", client.WithHTTPClient(unknownHost)),
		"https:// at plain HTTP":   client.New("https://"+server(false), "t"),
		"http:// at TLS":           client.New("http://"+server(true), "t"),
	} {
		_, err := c.WaitOnce(t.Context(), "aaaaaaaaaaaaaaaaa", 0)
		if client.AddressFault(err) == "" {
			t.Fatalf("%s: %v is no address fault", name, err)
		}
		faults[name] = &UnavailableError{Err: err, Message: fmt.Sprintf("askbridge server: %v; check ASKBRIDGE_URL", err)}
	}
	return faults
}

// TestAWrongAddressEndsAWaitAtOnce: get_answer, and a host's reply (the
// 2026-07-28 retry of a call), sent to a bridge at a wrong address end
// after one try, naming the question, what is wrong with the address,
// and the backend's words (ASKBRIDGE_URL). Before, the fault was taken
// for an outage: tried five times, a wait slice apart, so each call held
// its host for a minute and then said only to try again later.
func TestAWrongAddressEndsAWaitAtOnce(t *testing.T) {
	const id core.QuestionID = "aaaaaaaaaaaaaaaaa"
	q := &core.Question{ID: id, Kind: core.KindClarification, Text: "Which way?", State: core.StateOpen}
	calls := map[string]func(context.Context, *handler) (*mcpsdk.CallToolResult, Result, error){
		"get_answer": func(ctx context.Context, h *handler) (*mcpsdk.CallToolResult, Result, error) {
			return h.await(ctx, nil, id, MaxGetAnswerWait)
		},
		"the host's reply": func(ctx context.Context, h *handler) (*mcpsdk.CallToolResult, Result, error) {
			req := &mcpsdk.CallToolRequest{Params: &mcpsdk.CallToolParamsRaw{Name: ToolClarification, RequestState: string(id),
				InputResponses: mcpsdk.InputResponseMap{hostKey(id, formFor(q), 0): &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "left"}}}}}
			return h.retry(ctx, req, core.KindClarification)
		},
	}
	for name, fault := range wrongAddresses(t) {
		for call, do := range calls {
			t.Run(name+", "+call, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					b := &flaky{failures: 1 << 30, err: fault} // every wait fails
					h := &handler{b: b, opts: Options{}.withDefaults(), run: "run-test"}
					start := time.Now()
					res, r, err := do(t.Context(), h)
					if took, tries := time.Since(start), b.calls.Load(); took != 0 || tries != 1 {
						t.Errorf("ended after %s and %d tries; want at once, after one", took, tries)
					}
					if err != nil || res == nil || !res.IsError || r.QuestionID != id {
						t.Fatalf("got %+v, %+v, %v; want an error result naming %s", res, r, err, id)
					}
					text := res.Content[0].(*mcpsdk.TextContent).Text
					for _, want := range []string{string(id), client.AddressFault(fault), "ASKBRIDGE_URL", ToolGetAnswer} {
						if !strings.Contains(text, want) {
							t.Errorf("text %q: want %q in it", text, want)
						}
					}
				})
			})
		}
	}
}

// TestAHostGoneAfterTheBridgeAnsweredIsAnOutage: once the bridge has
// answered this server at its address, the address was right: a host
// DNS stops knowing then (a compose service's name, gone while its
// container restarts) is ridden out as any outage is, and the answer
// reaches the call.
func TestAHostGoneAfterTheBridgeAnsweredIsAnOutage(t *testing.T) {
	svc := service(t)
	gone := wrongAddresses(t)["a host DNS does not know"]
	b := &flaky{ServiceBackend: ServiceBackend{Svc: svc, Agent: "a"}, failures: 2, err: gone}
	h := newHandler(b)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	q, _, err := h.ask(ctx, core.AskInput{Kind: core.KindClarification, RunID: "r", Text: "Which way?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "op"}, Text: "left"}); err != nil {
		t.Fatal(err)
	}
	res, r, err := h.await(ctx, nil, q.ID, -1)
	if err != nil || res.IsError || r.State != core.StateAnswered || b.calls.Load() != 3 {
		t.Fatalf("after 2 waits failed so: %+v, %+v, %v, %d tries; want the answer after 3", res, r, err, b.calls.Load())
	}
}

// failingAsk is a backend whose every ask fails with err.
type failingAsk struct {
	ServiceBackend
	err error
}

func (f failingAsk) Ask(context.Context, core.AskInput) (*core.Question, error) { return nil, f.err }

func (f failingAsk) AskOrRepeat(context.Context, core.AskInput) (*core.Question, bool, error) {
	return nil, false, f.err
}

// TestAnAskThatMayHaveBeenParkedSaysHowToGetIt: an ask that failed on
// the way (the connection reset after it was sent, the store failing)
// may have been parked all the same, and the tool error says so, and how
// to get that question rather than ask people twice: the same call with
// the same tool_call_id, or, without one, the same call unchanged when
// the backend keeps the ask's Idempotency-Key (its key named); with
// neither, that asking again may ask twice. An ask refused, or sent to a
// wrong address or to something that is not askbridge, parked nothing,
// and its error says nothing of the kind. Before, every failure read as
// the backend's words alone ("not reachable"), and a model that asked
// again in other words, or went on alone, left people answering a
// question nobody collected.
func TestAnAskThatMayHaveBeenParkedSaysHowToGetIt(t *testing.T) {
	const lost = "askbridge server at http://127.0.0.1:9 is not reachable (connection reset); start it with `askbridge serve`"
	keyed := question
	keyed.ToolCallID = "call-7"
	for _, c := range []struct {
		name    string
		in      clarificationInput
		err     error
		want    []string
		notWant []string
	}{
		{"a call with a tool_call_id, its reply lost", keyed, &UnavailableError{Message: lost, Err: syscall.ECONNRESET},
			[]string{lost, "may have been parked", "same tool_call_id", `"call-7"`}, nil},
		{"a call without one, its key kept", question, &UnavailableError{Message: lost, Err: &client.AskError{Key: "k-42", Err: syscall.ECONNRESET}},
			[]string{lost, "may have been parked", "unchanged", "k-42"}, nil},
		{"a call without one, nothing kept", question, core.Internal("ask", errors.New("redis: i/o timeout")),
			[]string{"may have been parked", "twice"}, []string{"redis"}},
		{"a refusal", question, core.Errorf(core.CodeInvalid, "ask", "question is required"),
			[]string{"question is required"}, []string{"parked"}},
		{"a wrong address", keyed, wrongAddresses(t)["a host DNS does not know"],
			[]string{"ASKBRIDGE_URL", `DNS knows no host "askbrigde.internal"`}, []string{"parked"}},
		{"not askbridge", keyed, &UnavailableError{Message: "askbridge server did not answer as askbridge (HTTP 404); check ASKBRIDGE_URL",
			Err: &client.Error{Status: http.StatusNotFound, Message: "404 page not found"}},
			[]string{"HTTP 404"}, []string{"parked"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHandler(failingAsk{err: c.err})
			res, _, err := h.call(t.Context(), nil, c.in)
			if err == nil || res != nil {
				t.Fatalf("got %+v, %v; want a tool error", res, err)
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("tool error %q: want %q in it", err, want)
				}
			}
			for _, not := range c.notWant {
				if strings.Contains(err.Error(), not) {
					t.Errorf("tool error %q: want no %q in it", err, not)
				}
			}
		})
	}
}
