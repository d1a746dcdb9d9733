package app_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestEventsCutShortExitsNonZero: "askbridge events" whose stream the
// server aborts after a page (its read of the log failed) prints nothing
// and exits 1, saying the stream broke off, rather than print part of the
// log and exit 0, or say only "unexpected EOF".
func TestEventsCutShortExitsNonZero(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		_, _ = w.Write([]byte("id: 1\nevent: asked\ndata: {\"seq\":1,\"kind\":\"asked\"}\n\n"))
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // as the server does when a later read fails
	}))
	t.Cleanup(srv.Close)
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_URL": srv.URL, "ASKBRIDGE_TOKEN": "some-token-0123456789"}[k]
	}
	var out, errb bytes.Buffer
	code := app.Run(t.Context(), []string{"events"}, env, nil, &out, &errb)
	if code != app.ExitError || out.Len() != 0 || !strings.Contains(errb.String(), "the event stream broke off") {
		t.Fatalf("events cut short: exit %d, stdout %q, stderr %q; want exit %d, nothing printed, and the stream said to have broken off",
			code, out.String(), errb.String(), app.ExitError)
	}
}

// TestHelpPrintsTheCommandsUsage: "askbridge COMMAND -h", as the general
// usage says to run, prints the command's usage line and exits 2, for
// every command alike. Before, serve answered that it takes no arguments,
// mcp printed Go's bare "Usage of mcp:", and healthcheck exited 0.
func TestHelpPrintsTheCommandsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "-h"}, {"serve", "--help"}, {"mcp", "-h"}, {"healthcheck", "-h"}, {"healthcheck", "--help"},
		{"ask", "-h"}, {"questions", "-h"}, {"answer", "-h"}, {"decline", "-h"}, {"wait", "-h"},
		{"events", "-h"}, {"people", "-h"}, {"policy", "test", "-h"}, {"audit", "verify", "-h"},
	} {
		var out, errb bytes.Buffer
		code := app.Run(t.Context(), args, func(string) string { return "" }, nil, &out, &errb)
		usage := "usage: askbridge " + strings.Join(args[:len(args)-1], " ")
		if code != app.ExitUsage || !strings.HasPrefix(errb.String(), usage) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", args, code, errb.String(), app.ExitUsage, usage)
		}
	}
}

// TestStrayArgumentsAreRefused: the commands that take no arguments
// refuse one with exit 2, as ask and serve do, before they reach the
// server. Before, questions, events and people ignored it ("askbridge
// events 40" printed the whole log, not the events after 40).
func TestStrayArgumentsAreRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("%s %s reached the server", r.Method, r.URL.Path)
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_URL": srv.URL, "ASKBRIDGE_TOKEN": "some-token-0123456789"}[k]
	}
	for _, args := range [][]string{{"questions", "open"}, {"questions", "--json", "open"}, {"events", "40"}, {"events", "--follow", "x"}, {"people", "alice"}, {"mcp", "run-1"}, {"mcp", "--route", "ops", "run-1"}} {
		var out, errb bytes.Buffer
		code := app.Run(t.Context(), args, env, nil, &out, &errb)
		want := "askbridge " + args[0] + ": unexpected argument " + strconv.Quote(args[len(args)-1])
		if code != app.ExitUsage || !strings.Contains(errb.String(), want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", args, code, errb.String(), app.ExitUsage, want)
		}
	}
}
