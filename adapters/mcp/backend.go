package mcp

import (
	"context"

	"github.com/askbridge/askbridge/core"
)

// Backend parks questions and waits for them. In the server it is
// core.Service (through ServiceBackend, or a small adapter that fills in the
// agent name); in `askbridge mcp` over stdio it is the HTTP client to a
// running server.
type Backend interface {
	// Ask parks a question and returns it as stored.
	Ask(ctx context.Context, in core.AskInput) (*core.Question, error)
	// Wait returns when the question is closed or ctx ends; in the second
	// case the question comes back still open (or ctx's error comes back:
	// both are read as "not answered yet").
	Wait(ctx context.Context, id string) (*core.Question, error)
}

// ServiceBackend is a Backend directly over core, for a server that runs
// the service in-process and for tests. Every question it parks is asked
// in the name of Agent or, when Agent is empty, of the HTTP caller that
// Options.Caller named (see CallerFrom).
type ServiceBackend struct {
	Svc   *core.Service
	Agent string
}

var _ Backend = ServiceBackend{}

// Ask parks in as Agent's question, or the caller's.
func (b ServiceBackend) Ask(ctx context.Context, in core.AskInput) (*core.Question, error) {
	in.Agent = b.Agent
	if in.Agent == "" {
		in.Agent = CallerFrom(ctx)
	}
	return b.Svc.Ask(ctx, in)
}

// Wait blocks on core until the question closes or ctx ends.
func (b ServiceBackend) Wait(ctx context.Context, id string) (*core.Question, error) {
	return b.Svc.Wait(ctx, id)
}
