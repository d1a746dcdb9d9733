package app_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// unknownID is a question id no bridge holds.
const unknownID = "a2gj3hgdnifvtftln"

// clientCommands is one call of each CLI command that reaches the bridge
// and then ends (events --follow and the hook are left out: the first
// waits through outages by design, the second keeps its host's codes).
var clientCommands = [][]string{
	{"ask", "--question", "Deploy?", "--reversibility", "reversible"},
	{"ask", "--no-wait", "--question", "Deploy?", "--reversibility", "reversible"},
	{"wait", unknownID},
	{"questions"},
	{"show", unknownID},
	{"answer", unknownID, "--text", "eu-west-1"},
	{"decline", unknownID},
	{"events"},
	{"people"},
}

// envAt is the environment of a CLI that reaches url with token.
func envAt(url, token string) func(string) string {
	return func(k string) string {
		return map[string]string{"ASKBRIDGE_URL": url, "ASKBRIDGE_TOKEN": token}[k]
	}
}

// TestCLIExitsUnreachable: every command that reaches the bridge exits 10
// when no bridge answers (nothing listens, or a proxy in front answers 502,
// 503 or 504 to each try), so a script can tell "try again later" from any
// other error. Before, each exited 1, as for any error.
func TestCLIExitsUnreachable(t *testing.T) {
	app.SetRetryPause(t, time.Millisecond)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nothing := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now: each dial is refused
	for _, status := range []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, http.StatusText(status), status) // a proxy's page, not the API's
		}))
		t.Cleanup(proxy.Close)
		for _, args := range clientCommands {
			code, out, errb := runAll(t.Context(), envAt(proxy.URL, apptest.AgentA), "", args...)
			if code != app.ExitUnreachable {
				t.Errorf("%v behind a proxy answering %d: exit %d, stdout %q, stderr %q; want %d", args, status, code, out, errb, app.ExitUnreachable)
			}
		}
	}
	for _, args := range clientCommands {
		code, out, errb := runAll(t.Context(), envAt(nothing, apptest.AgentA), "", args...)
		if code != app.ExitUnreachable || !strings.HasPrefix(errb, "askbridge") {
			t.Errorf("%v with no bridge: exit %d, stdout %q, stderr %q; want %d and why", args, code, out, errb, app.ExitUnreachable)
		}
	}
}

// TestCLIExitsOneWhenStopped: a command stopped (Ctrl-C, SIGTERM) while
// it retries a bridge that is not reached exits 1, an error, not 10: it
// was stopped, and whatever its last try met says nothing of what the
// same command would meet later.
func TestCLIExitsOneWhenStopped(t *testing.T) {
	app.SetRetryPause(t, time.Millisecond)
	for _, args := range clientCommands {
		ctx, stop := context.WithCancel(t.Context())
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			stop() // the person at the terminal gives up while the bridge is down
			http.Error(w, "Bad Gateway", http.StatusBadGateway)
		}))
		code, out, errb := runAll(ctx, envAt(proxy.URL, apptest.AgentA), "", args...)
		proxy.Close()
		stop()
		if code != app.ExitError {
			t.Errorf("%v stopped while the bridge was not reached: exit %d, stdout %q, stderr %q; want %d", args, code, out, errb, app.ExitError)
		}
	}
}

// TestCLIExitsOneOnACertificateThatDoesNotVerify: a bridge whose TLS
// certificate does not verify is an error to fix (1), not a bridge to try
// again later (10), though no request reached it.
func TestCLIExitsOneOnACertificateThatDoesNotVerify(t *testing.T) {
	app.SetRetryPause(t, time.Millisecond)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached the server: %s %s", r.Method, r.URL)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // each refused handshake is logged otherwise
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, args := range clientCommands {
		code, out, errb := runAll(t.Context(), envAt(srv.URL, apptest.AgentA), "", args...)
		if code != app.ExitError || !strings.Contains(errb, "certificate") {
			t.Errorf("%v at a bridge whose certificate does not verify: exit %d, stdout %q, stderr %q; want %d and why", args, code, out, errb, app.ExitError)
		}
	}
}

// TestCLIExitsRefused: every command exits 11 when the bridge refuses its
// token (401) or the token's role (403), so a script can tell a token to
// fix from any other error; a question the bridge does not know stays an
// error, 1. Before, each exited 1.
func TestCLIExitsRefused(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	for _, args := range clientCommands {
		code, out, errb := runAll(t.Context(), envAt(m.URL, "not-a-token-0123456789"), "", args...)
		if code != app.ExitRefused {
			t.Errorf("%v with a wrong token: exit %d, stdout %q, stderr %q; want %d", args, code, out, errb, app.ExitRefused)
		}
	}
	q, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		Reversibility: core.Reversible, RunID: "run-1", ToolCallID: "toolu_1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"answer", string(q.ID), "--text", "eu-west-1"}, {"decline", string(q.ID)}} {
		code, out, errb := runAll(t.Context(), envAt(m.URL, apptest.ObsTok), "", args...)
		if code != app.ExitRefused {
			t.Errorf("%v by an observer: exit %d, stdout %q, stderr %q; want %d", args, code, out, errb, app.ExitRefused)
		}
	}
	for _, args := range [][]string{{"show", unknownID}, {"wait", unknownID}, {"decline", unknownID}} {
		code, out, errb := runAll(t.Context(), envAt(m.URL, m.AdminToken), "", args...)
		if code != app.ExitError {
			t.Errorf("%v of a question the bridge does not know: exit %d, stdout %q, stderr %q; want %d", args, code, out, errb, app.ExitError)
		}
	}
}

// TestCLIExitsUsageWhenTheBridgeRefusesTheRequest: what the bridge
// refuses as invalid, which the CLI cannot check before it sends it (a
// route not configured, an option the question does not have, a
// negative --since), is bad usage, 2, as what the CLI checks itself is.
// Before, it exited 1, though the README says an ask the server would
// refuse exits 2.
func TestCLIExitsUsageWhenTheBridgeRefusesTheRequest(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	code, out, errb := runAll(t.Context(), env, "", "ask", "--no-wait", "--question", "Which?", "--reversibility", "reversible",
		"--option", "a|A|fast", "--option", "b|B|safe", "--recommend", "a")
	if code != 0 {
		t.Fatalf("ask: exit %d, %s", code, errb)
	}
	id := strings.TrimSpace(out)
	for _, args := range [][]string{
		{"ask", "--question", "Deploy?", "--reversibility", "reversible", "--route", "nosuch"},
		{"answer", id, "--option", "zzz"},
		{"events", "--since", "-5"},
	} {
		code, out, errb := runAll(t.Context(), env, "", args...)
		if code != app.ExitUsage || !strings.Contains(errb, "invalid") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and the bridge's words", args, code, out, errb, app.ExitUsage)
		}
	}
}

// TestCLIExitsOneWhenTheURLIsNoURL: an ASKBRIDGE_URL that is no http(s)
// URL is an error to fix (1), said as such, not a bridge to try again
// later (10). Before, the request failed as a connection does.
func TestCLIExitsOneWhenTheURLIsNoURL(t *testing.T) {
	for _, url := range []string{"localhost:8080", "ftp://127.0.0.1:1", "http://"} {
		code, out, errb := runAll(t.Context(), envAt(url, apptest.AgentA), "", "questions")
		if code != app.ExitError || !strings.Contains(errb, "ASKBRIDGE_URL") {
			t.Errorf("ASKBRIDGE_URL=%q: exit %d, stdout %q, stderr %q; want %d naming ASKBRIDGE_URL", url, code, out, errb, app.ExitError)
		}
	}
}

// brokenWriter is a stdout that takes nothing: a full disk, a closed file.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestCLIExitsNonZeroWhenItCannotPrint: ask and wait whose stdout takes
// nothing exit 1, saying so, not the outcome's code: a script that reads
// the id or the resume from stdout got neither; and so does every other
// command that prints what a script reads. Before, they exited 0.
func TestCLIExitsNonZeroWhenItCannotPrint(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	var errb strings.Builder
	code := app.Run(t.Context(), []string{"ask", "--no-wait", "--question", "Deploy?", "--reversibility", "reversible"}, env, nil, brokenWriter{}, &errb)
	if code != app.ExitError || !strings.Contains(errb.String(), "no space left") {
		t.Errorf("ask --no-wait to a broken stdout: exit %d, stderr %q; want %d and why", code, errb.String(), app.ExitError)
	}
	q, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		Reversibility: core.Reversible, RunID: "run-1", ToolCallID: "toolu_1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(m.URL, m.AdminToken).Answer(t.Context(), q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"wait", string(q.ID)}, {"wait", string(q.ID), "--json"}, {"questions"}, {"events"}, {"show", string(q.ID)}, {"people"}} {
		errb.Reset()
		if code := app.Run(t.Context(), args, env, nil, brokenWriter{}, &errb); code != app.ExitError || !strings.Contains(errb.String(), "no space left") {
			t.Errorf("%v to a broken stdout: exit %d, stderr %q; want %d and why", args, code, errb.String(), app.ExitError)
		}
	}
	// answer and decline record before they print: they say so.
	for _, c := range []struct {
		args  []string
		state core.State
	}{{[]string{"answer", "", "--text", "eu-west-1"}, core.StateAnswered}, {[]string{"decline", ""}, core.StateDeclined}} {
		q, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
			Reversibility: core.Reversible, RunID: "run-1", ToolCallID: "toolu_" + string(c.state)})
		if err != nil {
			t.Fatal(err)
		}
		c.args[1] = string(q.ID)
		errb.Reset()
		code := app.Run(t.Context(), c.args, env, nil, brokenWriter{}, &errb)
		if code != app.ExitError || !strings.Contains(errb.String(), "no space left") || !strings.Contains(errb.String(), "recorded") {
			t.Errorf("%v to a broken stdout: exit %d, stderr %q; want %d, why, and that it is recorded", c.args, code, errb.String(), app.ExitError)
		}
		if v, err := client.New(m.URL, m.AdminToken).Get(t.Context(), q.ID); err != nil || v.State != c.state {
			t.Errorf("%v to a broken stdout: the question is %v (%v); want %s", c.args, v, err, c.state)
		}
	}
}

// TestHelpListsEveryExitCode: "askbridge help" lists the exit codes, each
// once, so a script's author need not read the source. Before, it listed
// none.
func TestHelpListsEveryExitCode(t *testing.T) {
	code, out, _ := runAll(t.Context(), func(string) string { return "" }, "", "help")
	if code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	_, codes, found := strings.Cut(out, "\nExit codes")
	if !found {
		t.Fatalf("help lists no exit codes:\n%s", out)
	}
	var listed []int
	for _, m := range regexp.MustCompile(`(?m)^  (\d+) `).FindAllStringSubmatch(codes, -1) {
		n, _ := strconv.Atoi(m[1])
		listed = append(listed, n)
	}
	want := []int{app.ExitAnswered, app.ExitError, app.ExitUsage, app.ExitDeclined, app.ExitTimedOut, app.ExitExpired,
		app.ExitCancelled, app.ExitDenied, app.ExitPartlyApproved, app.ExitApprovedEdited, app.ExitUnreachable, app.ExitRefused, app.ExitConfig}
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("help lists exit codes %v; want each of %v once:\n%s", listed, want, codes)
	}
	// The codes a script tells failures apart by, each beside its meaning.
	for code, says := range map[int]string{app.ExitError: "an error", app.ExitUsage: "bad usage",
		app.ExitUnreachable: "not reached", app.ExitRefused: "refused the token", app.ExitConfig: "setting or the configuration file refused"} {
		if !regexp.MustCompile(`(?m)^  ` + strconv.Itoa(code) + ` .*` + says).MatchString(codes) {
			t.Errorf("help does not list %d as %q:\n%s", code, says, codes)
		}
	}
}
