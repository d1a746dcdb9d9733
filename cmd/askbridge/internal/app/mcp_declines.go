package app

import (
	"context"
	"errors"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// A host's decline of a task's form, kept on the server, as /mcp keeps
// it: the task goes back to working and the form is not asked again.

// hostDeclines is what the API keeps an agent's host's declines with
// (httpapi.Options.HostDeclines): the MCP door's own backend, for the
// question's agent, so a decline kept through `askbridge mcp` lies under
// the key, and for the time, that /mcp keeps one (mcp.ServiceBackend).
func hostDeclines(svc *core.Service) func(core.AgentID) httpapi.HostDeclines {
	return func(a core.AgentID) httpapi.HostDeclines { return mcp.ServiceBackend{Svc: svc, Agent: a} }
}

var _ mcp.HostDeclines = clientBackend{}

// DeclineHostForm keeps the host's decline on the server. A server that
// keeps none (one older than its route) leaves the form to be asked
// again, as it was before, rather than the host told its task is gone.
func (b clientBackend) DeclineHostForm(ctx context.Context, id core.QuestionID, key string) error {
	if err := b.own(ctx, id); err != nil {
		return err
	}
	_, err := b.c.DeclineInHost(ctx, id, key)
	if noRoute(err) {
		return nil
	}
	return b.coded(err)
}

// HostFormDeclined asks the server whether the host declined form key;
// a server that keeps no declines has none.
func (b clientBackend) HostFormDeclined(ctx context.Context, id core.QuestionID, key string) (bool, error) {
	if err := b.own(ctx, id); err != nil {
		return false, err
	}
	res, err := b.c.HostDeclined(ctx, id, key)
	if noRoute(err) {
		return false, nil
	}
	if err != nil {
		return false, b.coded(err)
	}
	return res.Declined, nil
}

// noRoute reports whether the server does not serve the route err came
// from.
func noRoute(err error) bool {
	var e *client.Error
	return errors.As(err, &e) && e.NoRoute()
}
