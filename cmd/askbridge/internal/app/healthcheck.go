package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheck registers itself, as the chat platforms do, so the command
// table is not edited for it.
func init() { cliCommands["healthcheck"] = cmdHealthcheck }

// cmdHealthcheck asks the local server's /readyz (or, with --live, its
// /healthz) and exits 0 on a 200. It exists so an image with no shell
// and no curl can still declare a HEALTHCHECK: the binary checks itself.
//
// The image's HEALTHCHECK asks --live. Docker has one health, and Swarm
// (and autoheal tools) kill a container that is unhealthy: asked of
// /readyz, a store that is failing over or briefly down would have every
// replica killed at once, and killed again at each start that finds it
// still down, dropping every parked wait for nothing, where a replica
// left running answers 503 meanwhile and serves again once the store is
// back. Readiness is for what can take a replica out of traffic without
// killing it (Kubernetes' readinessProbe).
func cmdHealthcheck(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("healthcheck", stderr, "healthcheck [--live] [--url URL] [--timeout D]\n\n"+
		"Exits 0 when the server's /readyz answers 200 (the store answers a ping), 1 otherwise;\n"+
		"with --live, when its /healthz does (the server serves, whether or not its store answers).")
	url := fs.String("url", "", "the URL to ask (default: /readyz, or /healthz with --live, on the port of ASKBRIDGE_ADDR, over loopback)")
	live := fs.Bool("live", false, "ask /healthz, whether the server serves, not /readyz, whether it also reaches its store: for a container's HEALTHCHECK, which a store outage must not fail")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil || !noArgs(fs, stderr) {
		return exitUsage // -h too, as every command's
	}
	if *timeout <= 0 {
		fmt.Fprintln(stderr, "askbridge healthcheck: --timeout must be positive")
		return exitUsage
	}
	if *live && *url != "" {
		fmt.Fprintln(stderr, "askbridge healthcheck: --url names the whole URL to ask, and --live only the path of the default one: give one of them")
		return exitUsage
	}
	target, not := *url, "not ready"
	if *live {
		not = "not serving"
	}
	if target == "" {
		s, err := readEnv(getenv)
		if err != nil {
			fmt.Fprintln(stderr, "askbridge healthcheck:", err)
			return exitUsage
		}
		probe := readyURL
		if *live {
			probe = liveURL
		}
		if target, err = probe(s.Addr); err != nil {
			fmt.Fprintln(stderr, "askbridge healthcheck: ASKBRIDGE_ADDR:", err)
			return exitUsage
		}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		fmt.Fprintln(stderr, "askbridge healthcheck: --url:", err)
		return exitUsage
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "askbridge healthcheck: %s: %v\n", not, err)
		return exitError
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "askbridge healthcheck: %s: %s answered %s\n", not, target, resp.Status)
		return exitError
	}
	if *live {
		fmt.Fprintln(stdout, "serving")
	} else {
		fmt.Fprintln(stdout, "ready")
	}
	return 0
}

// readyURL is /readyz on the server's own port; liveURL is /healthz.
func readyURL(addr string) (string, error) { return probeURL(addr, "/readyz") }
func liveURL(addr string) (string, error)  { return probeURL(addr, "/healthz") }

// probeURL is path on the server's own port. A wildcard listen address
// (0.0.0.0, [::] or none, as in a container) is reached over loopback.
func probeURL(addr, path string) (string, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", err
	}
	return "http://" + loopbackAddr(addr) + path, nil
}

// loopbackAddr is the address a client on this machine dials for a
// server listening on addr: a wildcard host (0.0.0.0, [::] or none) is
// loopback; any other address, or one that does not parse, is addr.
func loopbackAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	default:
		return addr
	}
	return net.JoinHostPort(host, port)
}
