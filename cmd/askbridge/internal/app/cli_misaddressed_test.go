package app_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// dnsKnowsNoHost makes the CLI's HTTP client (http.DefaultClient, with
// an ASKBRIDGE_TOKEN) fail each dial of host as net.Dialer does when DNS
// says the host does not exist, until t ends. No test asks a real
// resolver: Go's sends even a .invalid name to the configured nameserver.
func dnsKnowsNoHost(t *testing.T, host string) {
	prev := http.DefaultClient
	var d net.Dialer
	http.DefaultClient = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if h, _, _ := net.SplitHostPort(addr); h == host {
			return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: h, IsNotFound: true}}
		}
		return d.DialContext(ctx, network, addr)
	}}}
	t.Cleanup(func() { http.DefaultClient = prev })
}

// TestCLIEndsAtOnceOnAWrongAddress: every command, ask and wait and
// events --follow among them, ends at once at an ASKBRIDGE_URL no retry
// mends (a host DNS does not know, https:// at a plain-HTTP bridge,
// http:// at one behind TLS), exiting 1 and naming the setting. Before,
// ask and wait retried the first two for seconds and events --follow
// for ever, as if the bridge were down; and http:// at TLS exited 1 with
// the server's 400 alone, the setting not named.
func TestCLIEndsAtOnceOnAWrongAddress(t *testing.T) {
	app.SetRetryPause(t, time.Hour) // a retry would hold the command until the guard
	dnsKnowsNoHost(t, "askbrigde.internal")
	plain := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached the plain-HTTP server: %s %s", r.Method, r.URL)
	}))
	plain.Config.ErrorLog = log.New(io.Discard, "", 0) // each TLS hello is logged otherwise
	plain.Start()
	t.Cleanup(plain.Close)
	tls := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached the TLS server: %s %s", r.Method, r.URL)
	}))
	tls.Config.ErrorLog = log.New(io.Discard, "", 0)
	tls.StartTLS()
	t.Cleanup(tls.Close)
	commands := append(slices.Clone(clientCommands), []string{"events", "--follow"})
	for _, c := range []struct{ name, url, says string }{
		{"a host DNS does not know", "http://askbrigde.internal:8080", `DNS knows no host "askbrigde.internal"`},
		{"https:// at plain HTTP", "https://" + plain.Listener.Addr().String(), "speaks plain HTTP"},
		{"http:// at TLS", "http://" + tls.Listener.Addr().String(), "speaks HTTPS"},
	} {
		for _, args := range commands {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a guard, not a timing assertion
			code, out, errb := runAll(ctx, envAt(c.url, apptest.AgentA), "", args...)
			stopped := ctx.Err() != nil
			cancel()
			if code != app.ExitError || !strings.Contains(errb, "check ASKBRIDGE_URL") || !strings.Contains(errb, c.says) || stopped {
				t.Errorf("%s, %v: exit %d, stdout %q, stderr %q, stopped by the guard %v; want %d at once, naming ASKBRIDGE_URL and %q",
					c.name, args, code, out, errb, stopped, app.ExitError, c.says)
			}
		}
	}
}

// TestCLIExitsOneNamingTheURLOnNginxsPlainHTTPRefusal: nginx's 400 to
// plain HTTP at its TLS port (its page, not the API's error) is a wrong
// scheme in ASKBRIDGE_URL too, named so. Before, only the page's words
// said it.
func TestCLIExitsOneNamingTheURLOnNginxsPlainHTTPRefusal(t *testing.T) {
	nginx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>\r\n<body>\r\n"+
			"<center><h1>400 Bad Request</h1></center>\r\n<center>The plain HTTP request was sent to HTTPS port</center>\r\n</body>\r\n</html>\r\n")
	}))
	t.Cleanup(nginx.Close)
	for _, args := range clientCommands {
		code, out, errb := runAll(t.Context(), envAt(nginx.URL, apptest.AgentA), "", args...)
		if code != app.ExitError || !strings.Contains(errb, "check ASKBRIDGE_URL") || !strings.Contains(errb, "speaks HTTPS") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d naming ASKBRIDGE_URL", args, code, out, errb, app.ExitError)
		}
	}
}
