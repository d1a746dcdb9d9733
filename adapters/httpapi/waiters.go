package httpapi

import (
	"fmt"
	"net/http"

	"github.com/askbridge/askbridge/core"
)

// How many waits one question may have parked at once on this replica.
// A parked wait is cheap (parked.go) but holds a connection, a file
// descriptor of the process, for up to MaxWait; an agent that starts a
// wait per retry, or per worker, without ending the last would hold the
// bridge's descriptors until every door (the API, the console, the
// platforms' callbacks) was refused its next connection. Past the bound a
// wait is answered 429 with Retry-After, which the Go client waits out
// as it waits out a replica restarting, so a fan-out wider than the bound
// still gets its answer, a moment later; the bound is many times what one
// question's callers need (the agent, a CLI, an MCP host).

// DefaultMaxWaitsPerQuestion is Options.MaxWaitsPerQuestion's default.
const DefaultMaxWaitsPerQuestion = 256

// waitsRetryAfter is the Retry-After, in seconds, of a wait refused for
// its question's bound: a parked wait ends within its timeout, and the
// answer wakes every one of them at once.
const waitsRetryAfter = "1"

// tooManyWaits answers a wait refused for the bound on its question's
// waits: 429, with Retry-After, in the API's error shape.
func tooManyWaits(w http.ResponseWriter, max int) {
	w.Header().Set("Retry-After", waitsRetryAfter)
	writeErrorStatus(w, http.StatusTooManyRequests, core.CodeForbidden, fmt.Sprintf(
		"this question already has %d waits parked on this server, the most it holds: end the waits you no longer need, "+
			"or wait again in %s second (a wait's answer comes to every waiter at once)", max, waitsRetryAfter))
}
