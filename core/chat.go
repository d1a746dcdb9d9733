package core

import (
	"context"
	"net/http"
)

// ChatAdapter is the contract every chat platform's adapter meets: a
// Courier for the outbox, and what the program needs to start it. Each
// adapter asserts it beside its type (var _ core.ChatAdapter =
// (*Adapter)(nil)), so a platform that misses a piece does not compile.
type ChatAdapter interface {
	Courier
	// Run receives clicks and replies (Socket Mode, the gateway, long
	// polling) until ctx ends, then returns nil. An adapter that only
	// takes HTTP callbacks just waits for ctx.
	Run(ctx context.Context) error
	// Mount adds the adapter's HTTP endpoints, if any, to the program's
	// mux.
	Mount(mux *http.ServeMux)
}
