package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// refusingProxy stands in front of the console as a load balancer does:
// it passes requests through until told to answer every one with an
// error status (a rolling deploy's 502), which also cuts the streams
// open through it, and passes them through again when told.
type refusingProxy struct {
	url     string
	mu      sync.Mutex
	status  int // 0: pass through
	streams map[*http.Request]context.CancelFunc
	refused chan string // the paths answered with status
}

func newRefusingProxy(t *testing.T, target string) *refusingProxy {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &refusingProxy{streams: map[*http.Request]context.CancelFunc{}, refused: make(chan string, 64)}
	pass := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(to); r.Out.Host = r.In.Host },
		FlushInterval: -1, // the event stream goes through as it is written
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		if status := p.status; status != 0 {
			p.mu.Unlock()
			select {
			case p.refused <- r.URL.Path:
			default:
			}
			http.Error(w, http.StatusText(status), status)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		r = r.WithContext(ctx)
		p.streams[r] = cancel
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.streams, r)
			p.mu.Unlock()
			cancel()
		}()
		pass.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// refuse answers every request with status from now on, and cuts what
// is open.
func (p *refusingProxy) refuse(status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = status
	for _, cancel := range p.streams {
		cancel()
	}
}

func (p *refusingProxy) pass() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = 0
}

// refusedOnce waits until a request for path has been refused.
func (p *refusingProxy) refusedOnce(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, apptest.WaitBound)
	defer cancel()
	for {
		select {
		case got := <-p.refused:
			if got == path {
				return
			}
		case <-c.Done():
			t.Fatalf("no request for %s was refused", path)
		}
	}
}

// TestConsoleStreamComesBackAfterRefusals: a browser's event stream
// stops for good when a reconnect is answered with anything but 200 (a
// 502 while replicas roll, a 500 during a store's failover). The page
// opens it again, resuming where it was, once the console answers again,
// so it comes back live with what changed meanwhile; and when the
// session has ended, it goes to sign-in rather than claim a lost
// connection.
func TestConsoleStreamComesBackAfterRefusals(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	br := apptest.NewChrome(t)
	px := newRefusingProxy(t, m.URL)
	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, px.url, apptest.OpTok, "ops")

	t.Run("a 502 while the console rolls", func(t *testing.T) {
		before := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Asked before the deploy?"})
		waitCard(t, tab, before.ID, "open")
		px.refuse(http.StatusBadGateway)
		px.refusedOnce(t, tab, "/stream")
		apptest.Until(t, tab, `document.body.getAttribute("data-live") === "no" && !document.getElementById("offline").hidden`)
		meanwhile := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Asked during the deploy?"})
		px.pass()
		waitCard(t, tab, meanwhile.ID, "open")
		waitLive(t, tab)
		if !apptest.Eval[bool](t, tab, `document.getElementById("offline").hidden && !document.querySelector("`+cardSel(meanwhile.ID)+` fieldset").disabled`) {
			t.Fatal("the page came back but still says the connection is lost")
		}
		// Resumed where it was: the question asked before is shown once.
		if n := apptest.Eval[int](t, tab, `document.querySelectorAll("[id='card-`+string(before.ID)+`']").length`); n != 1 {
			t.Fatalf("the question asked before the deploy is shown %d times", n)
		}
	})

	t.Run("a session that ended goes to sign-in", func(t *testing.T) {
		apptest.GoTo(t, tab, px.url+"/")
		waitLive(t, tab)
		// Signed out from this browser behind the page's back: the stream
		// ends with the session, and its reconnect is answered 401.
		status := awaited[int](t, tab, `fetch("/signout", {method: "POST", body: new URLSearchParams({
			csrf: document.querySelector("input[name=csrf]").value})}).then(function (r) { return r.status; })`)
		if status != http.StatusOK {
			t.Fatalf("sign out: %d", status)
		}
		apptest.Until(t, tab, `document.getElementById("token") !== null && document.getElementById("signin") !== null`)
	})
}
