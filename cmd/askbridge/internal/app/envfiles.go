package app

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/caarlos0/env/v11"
)

// maxEnvFile bounds what a NAME_FILE may hold: a token or a key, never a
// document. A larger file is refused rather than read into a variable.
const maxEnvFile = 64 << 10

// environWithFiles is the process's environment as the program reads it:
// each NAME_FILE=path (Docker and Swarm secrets, systemd credentials,
// any secret store that writes files) stands for NAME, set to the file's
// content without its final line break, so that a token need not sit in
// the environment of every process that can read /proc. It is resolved
// once at start, for askbridge's own variables and the ones a
// configuration's token_env names alike; a variable that is itself one
// of askbridge's settings and ends in _FILE (REDIS_TLS_CA_FILE) keeps its
// meaning. A NAME_FILE beside a non-empty NAME, an unreadable file or one
// over 64 KiB is an error naming the variable, and nothing starts.
func environWithFiles(environ []string, open func(string) (io.ReadCloser, error)) (func(string) string, error) {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	own, err := settingNames()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0)
	for k := range vars {
		if strings.HasSuffix(k, "_FILE") && len(k) > len("_FILE") && !own[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names) // the first error is the same on every start
	for _, k := range names {
		name := strings.TrimSuffix(k, "_FILE")
		if vars[name] != "" {
			return nil, fmt.Errorf("%s and %s are both set: keep one", name, k)
		}
		v, err := readEnvFile(vars[k], open)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		vars[name] = v
	}
	return func(k string) string { return vars[k] }, nil
}

// readEnvFile is a NAME_FILE's value: the file's content with its final
// line break cut (echo and most editors write one).
func readEnvFile(path string, open func(string) (io.ReadCloser, error)) (string, error) {
	if path == "" {
		return "", fmt.Errorf("set but empty: name the file that holds the value")
	}
	f, err := open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEnvFile+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > maxEnvFile {
		return "", fmt.Errorf("%s holds more than %d KiB: a variable's value is a token or a key", path, maxEnvFile>>10)
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

// settingNames are the variables Settings reads.
func settingNames() (map[string]bool, error) {
	params, err := env.GetFieldParams(&Settings{})
	if err != nil {
		return nil, err
	}
	own := make(map[string]bool, len(params))
	for _, p := range params {
		own[p.Key] = true
	}
	return own, nil
}

// openFile is os.Open as environWithFiles takes it.
func openFile(path string) (io.ReadCloser, error) { return os.Open(path) }
