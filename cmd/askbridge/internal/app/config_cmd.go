package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/askbridge/askbridge/core"
)

// cmdConfig is `askbridge config check`: the environment and the
// configuration file checked as serve checks them at start (LoadSettings,
// then checkServed), without opening the store or reaching a platform, so
// a deployment can refuse a bad ConfigMap or .env before it rolls out
// rather than after a replica fails to start. The same words as serve's
// refusal, and the file read as a reload reads it (parseFile, and
// refuseNothing: a file that holds nothing, which serve would start
// with, is refused as the running replicas' reload refuses it). A room or
// a person's direct messages on a platform the environment does not turn
// on is refused as serve refuses it once its adapters are open: the
// surfaces serve runs are those whose variable is set (surfacesOn).
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
	s, raw, err := loadSettings(env)
	if err != nil {
		return fail(stderr, err)
	}
	// serve starts with a file that holds nothing, but the replicas it is
	// rolled out to read it on a reload, which refuses it: the check says
	// what they will say.
	if s.ConfigPath != "" {
		if err := refuseNothing(s.ConfigPath, raw); err != nil {
			return fail(stderr, err)
		}
	}
	// The actor key is a stand-in, as parseFile's: core only checks that
	// there is one, and the data directory is not read.
	if _, err := checkServed(s, s.File, []byte("config check"), surfacesOn(env)); err != nil {
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

// surfacesOn are the chat surfaces env turns on, by the variable that
// turns each on (surfaceSwitch): those whose adapters serve opens (each
// adapter's open is a no-op without it, and LoadSettings has checked the
// rest of its settings).
func surfacesOn(env func(string) string) map[core.Surface]bool {
	on := map[core.Surface]bool{}
	for sf, name := range surfaceSwitch {
		if strings.TrimSpace(env(name)) != "" {
			on[sf] = true
		}
	}
	return on
}
