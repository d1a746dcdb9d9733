package client

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// noSuchHost is an HTTP client whose dials fail, counted in dials, as
// net.Dialer's do when DNS says the host does not exist, from the
// first dial on until the fail-th (0: every one), and go through after.
// Built so, no test asks a real resolver: Go's sends even a .invalid
// name to the configured nameserver (it short-circuits only .onion),
// which may forward it.
func noSuchHost(dials *atomic.Int32, from, until int32) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if n := dials.Add(1); n >= from && (until == 0 || n <= until) {
			host, _, _ := net.SplitHostPort(addr)
			return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
		}
		return d.DialContext(ctx, network, addr)
	}}}
}

// countConns counts the connections srv accepts.
func countConns(srv *httptest.Server, n *atomic.Int32) {
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
}

// misaddressed is one address no retry mends, and how many connections
// (or dials) calls to it have made.
type misaddressed struct {
	name  string
	url   string
	hc    *http.Client
	tries *atomic.Int32
}

// misaddresses are the addresses no retry mends: a host DNS does not
// know, https:// at plain HTTP, https:// at a server that speaks no
// HTTP at all, http:// at TLS.
func misaddresses(t *testing.T) []misaddressed {
	var dials, plainConns, sshConns, tlsConns atomic.Int32
	plain := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached the plain-HTTP server: %s %s", r.Method, r.URL)
	}))
	plain.Config.ErrorLog = log.New(io.Discard, "", 0) // each TLS hello is logged otherwise
	countConns(plain, &plainConns)
	plain.Start()
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached the TLS server: %s %s", r.Method, r.URL)
	}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	countConns(tlsSrv, &tlsConns)
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	// A server of another protocol, which greets first (SSH).
	ssh, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ssh.Close() })
	go func() {
		for {
			c, err := ssh.Accept()
			if err != nil {
				return
			}
			sshConns.Add(1)
			_, _ = io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n")
			c.Close()
		}
	}()
	return []misaddressed{
		{"a host DNS does not know", "http://askbrigde.internal:8080", noSuchHost(&dials, 1, 0), &dials},
		{"https:// at plain HTTP", "https://" + plain.Listener.Addr().String(), nil, &plainConns},
		{"https:// at a server that speaks no HTTP", "https://" + ssh.Addr().String(), nil, &sshConns},
		{"http:// at TLS", "http://" + tlsSrv.Listener.Addr().String(), nil, &tlsConns},
	}
}

// TestAWrongAddressEndsAtOnce: Ask, GetRetried, Wait and Follow end at
// once, after one try, on an address no retry mends, with an error
// AddressFault describes; Ask's is no *AskError, since nothing was
// parked. Before, a host DNS did not know and a scheme the server did
// not speak were retried as an outage: for seconds by Ask and
// GetRetried, for ever by Wait and Follow.
func TestAWrongAddressEndsAtOnce(t *testing.T) {
	calls := []struct {
		name string
		call func(context.Context, *Client) error
	}{
		{"Ask", func(ctx context.Context, c *Client) error {
			_, err := c.Ask(ctx, AskRequest{Kind: core.KindClarification, Question: "Deploy?", Reversibility: core.Reversible, RunID: "run-1"})
			if errors.As(err, new(*AskError)) {
				t.Errorf("Ask: %v is an *AskError, as if the question may have been parked", err)
			}
			return err
		}},
		{"GetRetried", func(ctx context.Context, c *Client) error { _, err := c.GetRetried(ctx, "q1"); return err }},
		{"Wait", func(ctx context.Context, c *Client) error { _, err := c.Wait(ctx, "q1"); return err }},
		{"Follow", func(ctx context.Context, c *Client) error { return c.Follow(ctx, 0, func(Event) error { return nil }) }},
	}
	for _, m := range misaddresses(t) {
		opts := []Option{WithRetryPause(time.Hour)} // a retry would hold the call until the guard
		if m.hc != nil {
			opts = append(opts, WithHTTPClient(m.hc))
		}
		for _, call := range calls {
			m.tries.Store(0)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a guard, not a timing assertion
			err := call.call(ctx, New(m.url, "t", opts...))
			stopped := ctx.Err() != nil
			cancel()
			if err == nil || stopped || m.tries.Load() != 1 || AddressFault(err) == "" {
				t.Errorf("%s, %s: %v after %d tries (stopped by the guard: %v); want an address fault after one", m.name, call.name, err, m.tries.Load(), stopped)
			}
		}
	}
}

// TestAddressFaultSaysWhatIsWrong: AddressFault names the fault of each
// wrong address, a Go or an nginx TLS server's 400 to plain HTTP
// included, and is "" for a failure that is not the address's.
func TestAddressFaultSaysWhatIsWrong(t *testing.T) {
	for _, m := range misaddresses(t) {
		_, err := New(m.url, "t", WithHTTPClient(orDefault(m.hc))).Get(t.Context(), "q1")
		if why := AddressFault(err); why == "" {
			t.Errorf("%s: AddressFault(%v) is empty", m.name, err)
		}
	}
	nginx := &Error{Status: http.StatusBadRequest, Message: "<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>"}
	if why := AddressFault(nginx); !strings.Contains(why, "http://") {
		t.Errorf("nginx's 400 to plain HTTP: AddressFault says %q; want the scheme named", why)
	}
	for _, err := range []error{
		&Error{Status: http.StatusBadRequest, Code: "invalid", Message: "question: required"},
		&Error{Status: http.StatusBadRequest, Message: "Bad Request"},
		&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "i/o timeout", Name: "askbridge.internal", IsTimeout: true}},
		context.DeadlineExceeded,
	} {
		if why := AddressFault(err); why != "" {
			t.Errorf("AddressFault(%v) = %q; want none", err, why)
		}
	}
}

func orDefault(hc *http.Client) *http.Client {
	if hc == nil {
		return http.DefaultClient
	}
	return hc
}

// TestWaitRidesOutAHostGoneAfterItAnswered: a host DNS stops knowing
// after the bridge answered there (a compose service's name, gone while
// its container restarts) is an outage, ridden out as a refused
// connection is: the address was right. Only a host never reached is
// taken for a wrong one.
func TestWaitRidesOutAHostGoneAfterItAnswered(t *testing.T) {
	var polls, dials atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if polls.Add(1) == 1 {
			_, _ = w.Write([]byte(`{"question_id":"q","state":"open","question":{}}`))
			return
		}
		_, _ = w.Write([]byte(`{"question_id":"q","state":"answered","resume":{"content":"x","structured":{}},"question":{}}`))
	}))
	srv.Config.SetKeepAlivesEnabled(false) // each poll dials, and looks the host up
	srv.Start()
	t.Cleanup(srv.Close)
	c := New(srv.URL, "t", WithRetryPause(time.Millisecond), WithHTTPClient(noSuchHost(&dials, 2, 4)))
	var told []error
	res, err := c.WaitWith(t.Context(), "q", func(err error) { told = append(told, err) })
	if err != nil || res.State != "answered" {
		t.Fatalf("wait across the host's absence: %+v, %v; want the answer", res, err)
	}
	if len(told) != 2 || AddressFault(told[0]) == "" || told[1] != nil || dials.Load() != 5 {
		t.Errorf("told %v after %d dials; want the host unknown, then nil, after 5", told, dials.Load())
	}
}
