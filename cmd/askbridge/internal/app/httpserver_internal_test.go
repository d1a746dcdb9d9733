package app

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServersCloseIdleAndStalledConnections: a keep-alive connection left
// idle, and one whose request never sends its body, are closed by the
// server; a request that has sent its body and then waits longer than
// the body's deadline (the hook door, MCP) is not cut short. Before,
// both connections stayed open for as long as the client liked, each
// holding a server goroutine.
func TestServersCloseIdleAndStalledConnections(t *testing.T) {
	keptIdle, keptBody := idleTimeout, bodyTimeout
	t.Cleanup(func() { idleTimeout, bodyTimeout = keptIdle, keptBody })
	idleTimeout, bodyTimeout = 200*time.Millisecond, 200*time.Millisecond
	release := make(chan struct{})
	srv := newServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		if r.URL.Path == "/wait" {
			select {
			case <-release: // well past the body's deadline
			case <-r.Context().Done():
				http.Error(w, "the request ended", http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = io.WriteString(w, "ok")
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	dial := func(req string) (net.Conn, *bufio.Reader) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	closed := func(name string, br *bufio.Reader) {
		t.Helper()
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("%s: the server kept the connection (%v)", name, err)
		}
	}

	_, idle := dial("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, err := http.ReadResponse(idle, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the first request: %v", err)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	closed("an idle keep-alive connection", idle)

	_, stalled := dial("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
	if resp, err := http.ReadResponse(stalled, nil); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode == http.StatusOK {
			t.Fatal("a request whose body never came was served")
		}
	}
	closed("a request whose body never came", stalled)

	_, waiting := dial("POST /wait HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	time.AfterFunc(3*bodyTimeout, func() { close(release) })
	resp, err := http.ReadResponse(waiting, nil)
	if err != nil {
		t.Fatalf("a request waiting past the body's deadline: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "ok") {
		t.Fatalf("a request waiting past the body's deadline: %d %s", resp.StatusCode, b)
	}
}
