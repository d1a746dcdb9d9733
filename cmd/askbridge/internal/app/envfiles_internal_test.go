package app

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvironReadsNameFile: NAME_FILE stands for NAME, read from the file
// without its final line break, for askbridge's own variables and any
// other (a configuration's token_env) alike; REDIS_TLS_CA_FILE, a setting
// of its own, keeps its meaning.
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
	getenv, err := environWithFiles([]string{
		"SLACK_BOT_TOKEN_FILE=" + slack,
		"BUILD_AGENT_TOKEN_FILE=" + agent,
		"REDIS_TLS_CA_FILE=" + ca,
		"ASKBRIDGE_ADDR=127.0.0.1:9999",
		"EMPTY=",
		"WITH_EQUALS=a=b",
	}, openFile)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"SLACK_BOT_TOKEN":      "xoxb-1-2-3",
		"BUILD_AGENT_TOKEN":    "s3cret",
		"SLACK_BOT_TOKEN_FILE": slack,
		"REDIS_TLS_CA_FILE":    ca,
		"REDIS_TLS_CA":         "",
		"ASKBRIDGE_ADDR":       "127.0.0.1:9999",
		"WITH_EQUALS":          "a=b",
		"UNSET":                "",
	} {
		if got := getenv(k); got != want {
			t.Errorf("%s = %q; want %q", k, got, want)
		}
	}
	s, err := readEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if s.RedisCAFile != ca || s.Addr != "127.0.0.1:9999" {
		t.Errorf("settings read REDIS_TLS_CA_FILE %q, ASKBRIDGE_ADDR %q", s.RedisCAFile, s.Addr)
	}
}

// TestEnvironRefusesABadNameFile: a NAME_FILE that cannot stand for NAME
// is an error naming the variable, and the program does not start on a
// guess.
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
		{"empty path", []string{"DISCORD_BOT_TOKEN_FILE="}, "DISCORD_BOT_TOKEN_FILE: set but empty"},
		{"too big", []string{"TELEGRAM_BOT_TOKEN_FILE=" + big}, "TELEGRAM_BOT_TOKEN_FILE: " + big + " holds more than 64 KiB"},
		{"a directory", []string{"TELEGRAM_BOT_TOKEN_FILE=" + dir}, "TELEGRAM_BOT_TOKEN_FILE: reading"},
	} {
		t.Run(c.name, func(t *testing.T) {
			getenv, err := environWithFiles(c.environ, openFile)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want one saying %q", err, c.want)
			}
			if getenv != nil {
				t.Error("an environment was returned beside the error")
			}
		})
	}
}

// TestEnvironFileIsReadOnce: the file is read at start and not again, so
// every part of the program (and a configuration reload's token_env)
// sees the same value.
func TestEnvironFileIsReadOnce(t *testing.T) {
	opens := 0
	getenv, err := environWithFiles([]string{"A_TOKEN_FILE=/secret"}, func(string) (io.ReadCloser, error) {
		opens++
		return io.NopCloser(strings.NewReader("v\n")), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got := getenv("A_TOKEN"); got != "v" {
			t.Fatalf("A_TOKEN = %q", got)
		}
	}
	if opens != 1 {
		t.Errorf("the file was opened %d times; want once", opens)
	}
}
