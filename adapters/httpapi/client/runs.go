package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/askbridge/askbridge/core"
)

// EndRun ends a run of the token's own agent and returns the ids of the
// open questions it expired.
func (c *Client) EndRun(ctx context.Context, runID core.RunID) (*EndRunResponse, error) {
	return c.EndRunOf(ctx, "", runID)
}

// EndRunOf ends agent's run, for an admin's token: an admin ends any
// agent's runs (an agent that asked and then died leaves them open). Any
// other token may name only its own agent, and is refused (403) for
// another's, rather than ending its own run of that name. An agent ""
// is the token's own, as EndRun.
func (c *Client) EndRunOf(ctx context.Context, agent core.AgentID, runID core.RunID) (*EndRunResponse, error) {
	var q url.Values
	if agent != "" {
		q = url.Values{"agent": {string(agent)}}
	}
	return call[EndRunResponse](ctx, c, http.MethodPost, "/v1/runs/"+url.PathEscape(string(runID))+"/end", q, nil)
}
