package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/askbridge/askbridge/core"
)

// What `askbridge mcp` needs of the server besides the MCP door
// (MCPDoor, AnswerInHost) to serve MCP Tasks as /mcp does: the bridge's
// retention, for a task's ttlMs, and a place to keep the host's decline
// of a task's form.

// Retention returns how long the bridge keeps a question once it has
// closed, as its configuration stands now.
func (c *Client) Retention(ctx context.Context) (*RetentionResponse, error) {
	return call[RetentionResponse](ctx, c, http.MethodGet, "/v1/retention", nil, nil)
}

// DeclineInHost keeps that this agent's MCP host declined form key of
// the question (a task's form, by its inputRequests key), on every
// replica, so the form is not asked again. The question stays open for
// chat. A server that does not keep declines answers with an *Error
// whose NoRoute holds.
func (c *Client) DeclineInHost(ctx context.Context, id core.QuestionID, key string) (*MCPDeclineResponse, error) {
	return call[MCPDeclineResponse](ctx, c, http.MethodPost, mcpDeclinePath(id), nil, MCPDeclineRequest{Key: key})
}

// HostDeclined reports whether this agent's MCP host declined form key
// of the question (DeclineInHost).
func (c *Client) HostDeclined(ctx context.Context, id core.QuestionID, key string) (*MCPDeclineResponse, error) {
	return call[MCPDeclineResponse](ctx, c, http.MethodGet, mcpDeclinePath(id), url.Values{"key": {key}}, nil)
}

func mcpDeclinePath(id core.QuestionID) string {
	return "/v1/questions/" + url.PathEscape(string(id)) + "/mcp/decline"
}
