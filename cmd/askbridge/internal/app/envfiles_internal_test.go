package app

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// environ is a fixed environment as a getenv.
func environ(kv ...string) func(string) string {
	m := map[string]string{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// TestEnvironReadsNameFile: NAME_FILE stands for NAME, read from the file
// without its final line break, for askbridge's own variables and any
// other (a configuration's token_env) alike; REDIS_TLS_CA_FILE, a setting
// of its own, keeps its meaning; another program's *_FILE that askbridge
// never asks for (COMPOSE_FILE naming a list, SSL_CERT_FILE a bundle over
// the size bound) stops nothing.
func TestEnvironReadsNameFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	slack := write("slack", "xoxb-1-2-3\n")
	agent := write("agent", "s3cret\r\n")
	ca := write("ca.pem", "-----BEGIN CERTIFICATE-----\n")
	bundle := write("bundle.pem", strings.Repeat("x", maxEnvFile+1))
	var warn bytes.Buffer
	e, err := newFileEnv(environ(
		"SLACK_BOT_TOKEN_FILE="+slack,
		"BUILD_AGENT_TOKEN_FILE="+agent,
		"REDIS_TLS_CA_FILE="+ca,
		"ASKBRIDGE_ADDR=127.0.0.1:9999",
		"COMPOSE_FILE=a.yaml:b.yaml",
		"SSL_CERT_FILE="+bundle,
	), openFile, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.check(); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"SLACK_BOT_TOKEN":      "xoxb-1-2-3",
		"BUILD_AGENT_TOKEN":    "s3cret",
		"SLACK_BOT_TOKEN_FILE": slack,
		"REDIS_TLS_CA_FILE":    ca,
		"REDIS_TLS_CA":         "",
		"ASKBRIDGE_ADDR":       "127.0.0.1:9999",
		"UNSET":                "",
	} {
		if got := e.Getenv(k); got != want {
			t.Errorf("%s = %q; want %q", k, got, want)
		}
	}
	if warn.Len() != 0 {
		t.Errorf("warnings written: %s", warn.String())
	}
	s, err := readEnv(e.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if s.RedisCAFile != ca || s.Addr != "127.0.0.1:9999" || s.Slack.BotToken != "xoxb-1-2-3" {
		t.Errorf("settings read REDIS_TLS_CA_FILE %q, ASKBRIDGE_ADDR %q, SLACK_BOT_TOKEN %q", s.RedisCAFile, s.Addr, s.Slack.BotToken)
	}
}

// TestEnvironRefusesABadNameFile: a NAME_FILE of one of askbridge's
// settings that cannot stand for it stops the program at start, named;
// one of a token_env's is written out once and reads as unset.
func TestEnvironRefusesABadNameFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", maxEnvFile+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, []byte("t"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		environ []string
		want    string
	}{
		{"both set", []string{"SLACK_BOT_TOKEN=xoxb-a", "SLACK_BOT_TOKEN_FILE=" + ok}, "SLACK_BOT_TOKEN and SLACK_BOT_TOKEN_FILE are both set"},
		{"no such file", []string{"DISCORD_BOT_TOKEN_FILE=" + filepath.Join(dir, "missing")}, "DISCORD_BOT_TOKEN_FILE: open"},
		{"too big", []string{"TELEGRAM_BOT_TOKEN_FILE=" + big}, "TELEGRAM_BOT_TOKEN_FILE: " + big + " holds more than 64 KiB"},
		{"a directory", []string{"TELEGRAM_BOT_TOKEN_FILE=" + dir}, "TELEGRAM_BOT_TOKEN_FILE: reading"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := newFileEnv(environ(c.environ...), openFile, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.check(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want one saying %q", err, c.want)
			}
		})
	}

	var warn bytes.Buffer
	e, err := newFileEnv(environ("BUILD_AGENT_TOKEN_FILE="+filepath.Join(dir, "missing")), openFile, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.check(); err != nil {
		t.Fatalf("a token_env's file is not one of the settings, yet check refused: %v", err)
	}
	for range 2 {
		if v := e.Getenv("BUILD_AGENT_TOKEN"); v != "" {
			t.Errorf("BUILD_AGENT_TOKEN = %q from a missing file", v)
		}
	}
	if got := strings.Count(warn.String(), "BUILD_AGENT_TOKEN_FILE: open"); got != 1 {
		t.Errorf("warnings %q; want the file's error written once", warn.String())
	}
}

// TestEnvironFileIsReadOnce: the file is read the first time its variable
// is asked for and not again, so every part of the program (and a
// configuration reload's token_env) sees the same value.
func TestEnvironFileIsReadOnce(t *testing.T) {
	opens := 0
	e, err := newFileEnv(environ("A_TOKEN_FILE=/secret"), func(string) (io.ReadCloser, error) {
		opens++
		return io.NopCloser(strings.NewReader("v\n")), nil
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got := e.Getenv("A_TOKEN"); got != "v" {
			t.Fatalf("A_TOKEN = %q", got)
		}
	}
	if opens != 1 {
		t.Errorf("the file was opened %d times; want once", opens)
	}
}

// TestEnvironNamesTheFirstBadFileInOrder: with several bad NAME_FILEs
// among the settings, check names the first in the order of their
// names, every time. Before, the settings were asked for in a map's
// order, and which file the error named changed from run to run.
func TestEnvironNamesTheFirstBadFileInOrder(t *testing.T) {
	dir := t.TempDir()
	for range 20 {
		e, err := newFileEnv(environ(
			"TELEGRAM_BOT_TOKEN_FILE="+filepath.Join(dir, "telegram"),
			"DISCORD_BOT_TOKEN_FILE="+filepath.Join(dir, "discord"),
		), openFile, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.check(); err == nil || !strings.HasPrefix(err.Error(), "DISCORD_BOT_TOKEN_FILE: ") {
			t.Fatalf("error %v; want DISCORD_BOT_TOKEN_FILE's, the first by name", err)
		}
	}
}
