package app_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

func TestHealthcheck(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	addr := strings.TrimPrefix(m.URL, "http://")
	env := func(k string) string {
		if k == "ASKBRIDGE_ADDR" {
			return addr
		}
		return ""
	}
	var out, errb bytes.Buffer
	if code := app.Run(t.Context(), []string{"healthcheck"}, env, nil, &out, &errb); code != 0 {
		t.Fatalf("healthcheck of a serving program: exit %d, stderr %q", code, errb.String())
	}
	if out.String() != "ready\n" {
		t.Errorf("stdout %q", out.String())
	}

	m.Close()
	errb.Reset()
	if code := app.Run(t.Context(), []string{"healthcheck"}, env, nil, &out, &errb); code != app.ExitError {
		t.Errorf("healthcheck of a stopped program: exit %d, want %d", code, app.ExitError)
	}
	if !strings.Contains(errb.String(), "not ready") {
		t.Errorf("stderr %q does not say why", errb.String())
	}
}

func TestHealthcheckRefusesNotReady(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			t.Errorf("asked %s", r.URL.Path)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	code := app.Run(t.Context(), []string{"healthcheck", "--url", srv.URL + "/readyz"}, func(string) string { return "" }, nil, &out, &errb)
	if code != app.ExitError || !strings.Contains(errb.String(), "503") {
		t.Errorf("exit %d, stderr %q; want %d and the status", code, errb.String(), app.ExitError)
	}
}

func TestHealthcheckUsage(t *testing.T) {
	for _, args := range [][]string{{"healthcheck", "extra"}, {"healthcheck", "--timeout", "0s"}, {"healthcheck", "--nope"}} {
		var out, errb bytes.Buffer
		if code := app.Run(t.Context(), args, func(string) string { return "" }, nil, &out, &errb); code != app.ExitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, app.ExitUsage)
		}
	}
	var out, errb bytes.Buffer
	bad := func(k string) string {
		if k == "ASKBRIDGE_ADDR" {
			return "no-port"
		}
		return ""
	}
	if code := app.Run(t.Context(), []string{"healthcheck"}, bad, nil, &out, &errb); code != app.ExitUsage || !strings.Contains(errb.String(), "ASKBRIDGE_ADDR") {
		t.Errorf("bad ASKBRIDGE_ADDR: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := app.Run(t.Context(), []string{"healthcheck", "--help"}, bad, nil, &out, &errb); code != app.ExitUsage || !strings.Contains(errb.String(), "/readyz") {
		t.Errorf("--help: exit %d, stderr %q", code, errb.String())
	}
}

func TestReadyURL(t *testing.T) {
	for addr, want := range map[string]string{
		"0.0.0.0:8080":   "http://127.0.0.1:8080/readyz",
		":9000":          "http://127.0.0.1:9000/readyz",
		"[::]:8080":      "http://[::1]:8080/readyz",
		"10.0.0.5:8081":  "http://10.0.0.5:8081/readyz",
		"localhost:8080": "http://localhost:8080/readyz",
	} {
		got, err := app.ReadyURL(addr)
		if err != nil || got != want {
			t.Errorf("readyURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
}

// With no ASKBRIDGE_ADDR, healthcheck asks the server's default address.
func TestHealthcheckDefaultAddress(t *testing.T) {
	s, err := app.ReadEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if got, err := app.ReadyURL(s.Addr); err != nil || got != "http://127.0.0.1:8080/readyz" {
		t.Errorf("readyURL(default) = %q, %v", got, err)
	}
}

// TestHeaderLimit: the API's listener reads at most 64 KiB of a request's
// header (Go's default is 1 MiB); a larger one is refused with 431 before
// any handler runs.
func TestHeaderLimit(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, m.URL+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("a", 200<<10))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a 200 KiB header: %d, want 431", res.StatusCode)
	}
}
