package app

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestZeroSetupServePrintsTheConsoleURL(t *testing.T) {
	var stdout bytes.Buffer
	m := &Main{Settings: Settings{Addr: "127.0.0.1:0", DataDir: t.TempDir()}, Stdout: &stdout, Log: zerolog.Nop()}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !strings.Contains(stdout.String(), "console: "+m.URL+"/") {
		t.Fatalf("the first start does not print the console's URL:\n%s", stdout.String())
	}
	resp, err := http.Get(m.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `action="/signin"`) {
		t.Fatalf("the console's URL: %d\n%s", resp.StatusCode, body)
	}
	// The API and the probes keep their own answers beside it.
	for path, want := range map[string]int{"/healthz": http.StatusOK, "/v1/questions": http.StatusUnauthorized} {
		resp, err := http.Get(m.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

func TestConsoleIdleSetting(t *testing.T) {
	for raw, want := range map[string]time.Duration{"": 12 * time.Hour, "30m": 30 * time.Minute, "soon": 0, "10s": 0} {
		s, err := LoadSettings(func(k string) string { return map[string]string{"ASKBRIDGE_CONSOLE_IDLE": raw}[k] })
		if want == 0 {
			if err == nil || !strings.Contains(err.Error(), "ASKBRIDGE_CONSOLE_IDLE") {
				t.Errorf("ASKBRIDGE_CONSOLE_IDLE=%q: %v", raw, err)
			}
			continue
		}
		if err != nil || s.Console.idle != want {
			t.Errorf("ASKBRIDGE_CONSOLE_IDLE=%q: %s, %v", raw, s.Console.idle, err)
		}
	}
}

func TestTrustedProxiesSetting(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string { return map[string]string{"ASKBRIDGE_TRUSTED_PROXIES": v}[k] }
	}
	s, err := LoadSettings(env("10.0.0.0/8, 192.0.2.7"))
	if err != nil || len(s.Console.proxies) != 2 || s.Console.proxies[1].String() != "192.0.2.7/32" {
		t.Fatalf("two proxies: %v, %v", s.Console.proxies, err)
	}
	if s, err := LoadSettings(env("")); err != nil || len(s.Console.proxies) != 0 {
		t.Fatalf("none: %v, %v", s.Console.proxies, err)
	}
	if _, err := LoadSettings(env("10.0.0.0/8, ingress.local")); err == nil ||
		!strings.Contains(err.Error(), "ASKBRIDGE_TRUSTED_PROXIES") || !strings.Contains(err.Error(), "ingress.local") {
		t.Fatalf("a host name: %v, want an error naming the setting and the entry", err)
	}
}

func TestConsoleMaxAgeSetting(t *testing.T) {
	for _, c := range []struct {
		idle, maxAge string
		want         time.Duration
	}{
		{"", "", 24 * time.Hour},
		{"", "7d", 7 * 24 * time.Hour},
		{"30m", "1h", time.Hour},
		{"", "soon", 0},
		{"25h", "", 0}, // shorter than the idle time
	} {
		s, err := LoadSettings(func(k string) string {
			return map[string]string{"ASKBRIDGE_CONSOLE_IDLE": c.idle, "ASKBRIDGE_CONSOLE_MAX_AGE": c.maxAge}[k]
		})
		if c.want == 0 {
			if err == nil || !strings.Contains(err.Error(), "ASKBRIDGE_CONSOLE_MAX_AGE") {
				t.Errorf("idle %q, max age %q: %v", c.idle, c.maxAge, err)
			}
			continue
		}
		if err != nil || s.Console.maxAge != c.want {
			t.Errorf("idle %q, max age %q: %s, %v", c.idle, c.maxAge, s.Console.maxAge, err)
		}
	}
}
