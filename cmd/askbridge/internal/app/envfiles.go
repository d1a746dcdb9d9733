package app

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/caarlos0/env/v11"
)

// maxEnvFile bounds what a NAME_FILE may hold: a token or a key, never a
// document. A larger file is refused rather than read into a variable.
const maxEnvFile = 64 << 10

// fileEnv is the environment as the program reads it: where NAME is
// unset, NAME_FILE=path (Docker and Swarm secrets, systemd credentials,
// any secret store that writes files) stands for it, NAME being the
// file's content without its final line break, so that a token need not
// sit in the environment of every process that can read /proc.
//
// A NAME_FILE is read only when the program asks for NAME, once: the
// environment carries other programs' *_FILE variables too (SSL_CERT_FILE,
// COMPOSE_FILE), which must not stop askbridge from starting.
// askbridge's own settings are asked for at the start of the commands
// that run on them (check, settingsCommands), so a bad file for one of
// them is an error naming it before anything starts; elsewhere (a
// client's few settings, a configuration's token_env when the file is
// loaded) a bad file is written to warn, the variable then being unset. A
// variable that is itself a setting and ends in _FILE
// (REDIS_TLS_CA_FILE) keeps its meaning.
type fileEnv struct {
	getenv func(string) string
	open   func(string) (io.ReadCloser, error)
	warn   io.Writer
	// settings are askbridge's own variables (settingNames), in order;
	// own is the same as a set.
	settings []string
	own      map[string]bool

	mu   sync.Mutex
	read map[string]fileValue
}

// fileValue is one NAME_FILE as read.
type fileValue struct {
	v      string
	err    error
	warned bool // err was written to warn
}

func newFileEnv(getenv func(string) string, open func(string) (io.ReadCloser, error), warn io.Writer) (*fileEnv, error) {
	settings, err := settingNames()
	if err != nil {
		return nil, err
	}
	own := make(map[string]bool, len(settings))
	for _, name := range settings {
		own[name] = true
	}
	return &fileEnv{getenv: getenv, open: open, warn: warn, settings: settings, own: own, read: map[string]fileValue{}}, nil
}

// settingNames are the variables Settings' tags name, in the order of
// their names.
func settingNames() ([]string, error) {
	params, err := env.GetFieldParams(&Settings{})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(params))
	for _, p := range params {
		names = append(names, p.Key)
	}
	slices.Sort(names)
	return names, nil
}

// check asks for every setting, so that a bad NAME_FILE among them stops
// the program at start, named, rather than leaving its setting unset.
// They are asked for in the order of their names, so that with several
// bad files the same one is named first each time.
func (e *fileEnv) check() error {
	for _, name := range e.settings {
		if _, err := e.lookup(name); err != nil {
			return err
		}
	}
	return nil
}

// Getenv is os.Getenv with NAME_FILE; a bad file is written to warn once
// and reads as unset.
func (e *fileEnv) Getenv(name string) string {
	v, err := e.lookup(name)
	if err != nil {
		e.mu.Lock()
		if f := e.read[name]; !f.warned {
			f.warned = true
			e.read[name] = f
			fmt.Fprintln(e.warn, "askbridge:", err)
		}
		e.mu.Unlock()
	}
	return v
}

// lookup is NAME's value: NAME itself, else its file's content.
func (e *fileEnv) lookup(name string) (string, error) {
	v := e.getenv(name)
	file := name + "_FILE"
	if e.own[file] {
		return v, nil
	}
	path := e.getenv(file)
	if path == "" {
		return v, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if f, ok := e.read[name]; ok {
		return f.v, f.err
	}
	var f fileValue
	if v != "" {
		f.err = fmt.Errorf("%s and %s are both set: keep one", name, file)
	} else if f.v, f.err = readEnvFile(path, e.open); f.err != nil {
		f.err = fmt.Errorf("%s: %w", file, f.err)
	}
	e.read[name] = f
	return f.v, f.err
}

// readEnvFile is a NAME_FILE's value: the file's content with its final
// line break cut (echo and most editors write one).
func readEnvFile(path string, open func(string) (io.ReadCloser, error)) (string, error) {
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

// openFile is os.Open as fileEnv takes it.
func openFile(path string) (io.ReadCloser, error) { return os.Open(path) }
