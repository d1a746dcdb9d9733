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

// cmdHealthcheck asks the local server's /readyz and exits 0 on a 200. It
// exists so an image with no shell and no curl can still declare a
// HEALTHCHECK: the binary checks itself.
func cmdHealthcheck(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("healthcheck", stderr, "healthcheck [--url URL] [--timeout D]\n\nExits 0 when the server's /readyz answers 200 (the store answers a ping), 1 otherwise.")
	url := fs.String("url", "", "the readiness URL to ask (default: /readyz on the port of ASKBRIDGE_ADDR, over loopback)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil || !noArgs(fs, stderr) {
		return exitUsage // -h too, as every command's
	}
	if *timeout <= 0 {
		fmt.Fprintln(stderr, "askbridge healthcheck: --timeout must be positive")
		return exitUsage
	}
	target := *url
	if target == "" {
		s, err := readEnv(getenv)
		if err != nil {
			fmt.Fprintln(stderr, "askbridge healthcheck:", err)
			return exitUsage
		}
		if target, err = readyURL(s.Addr); err != nil {
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
		fmt.Fprintln(stderr, "askbridge healthcheck: not ready:", err)
		return exitError
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "askbridge healthcheck: not ready: %s answered %s\n", target, resp.Status)
		return exitError
	}
	fmt.Fprintln(stdout, "ready")
	return 0
}

// readyURL is /readyz on the server's own port. A wildcard listen address
// (0.0.0.0, [::] or none, as in a container) is reached over loopback.
func readyURL(addr string) (string, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", err
	}
	return "http://" + loopbackAddr(addr) + "/readyz", nil
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
