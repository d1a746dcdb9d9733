package app

import (
	"context"
	"fmt"
	"io"
)

// cmdConfig is `askbridge config check`: the environment and the
// configuration file checked as serve checks them at start (LoadSettings),
// before it opens the store or reaches a platform, so a deployment can
// refuse a bad ConfigMap or .env before it rolls out rather than after a
// replica fails to start. The same words as serve's refusal, and the
// file read as a reload first reads it (parseFile). Not checked, as it
// takes the platforms' adapters: a room or a person's direct messages on
// a platform the environment does not turn on (checkSurfaces), which
// serve still refuses once its adapters are open.
func cmdConfig(_ context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	const synopsis = "config check [--config FILE]  (the environment's settings, and the file ASKBRIDGE_CONFIG or --config names)"
	if !subcommand(args, "check", synopsis, stderr) {
		return exitUsage
	}
	fs := newFlags("config check", stderr, synopsis)
	config := fs.String("config", "", "the configuration file to check (default $ASKBRIDGE_CONFIG)")
	if err := fs.Parse(args[1:]); err != nil || !noArgs(fs, stderr) {
		return exitUsage
	}
	env := getenv
	if *config != "" {
		env = func(k string) string {
			if k == "ASKBRIDGE_CONFIG" {
				return *config
			}
			return getenv(k)
		}
	}
	s, err := LoadSettings(env)
	if err != nil {
		return fail(stderr, err)
	}
	if s.ConfigPath == "" {
		fmt.Fprintln(stdout, "ok: the environment's settings; no configuration file (ASKBRIDGE_CONFIG is unset): one default route, answered through the API and the console")
		return 0
	}
	rules := 0
	for _, r := range s.File.Routes {
		rules += len(r.Rules)
	}
	fmt.Fprintf(stdout, "ok: the environment's settings and %s: %s, %s, %s, %s, %s\n", terminalLine(s.ConfigPath),
		count(len(s.File.Routes), "route"), count(len(s.File.People), "person"), count(len(s.File.Groups), "group"),
		count(rules, "policy rule"), count(len(s.File.Tokens), "token"))
	return 0
}
