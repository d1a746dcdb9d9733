package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// cancelledMethod is the notification a client sends to withdraw a request.
const cancelledMethod = "notifications/cancelled"

// withholding wraps a transport so that a request the client cancelled
// gets no response: MCP 2025-11-25 says the receiver of
// notifications/cancelled should not answer the request, and the SDK
// answers every request its handler returns from, cancelled or not. The
// question a cancelled call parked stays parked; get_answer collects it.
type withholding struct {
	mcpsdk.Transport
	log *slog.Logger
}

func (t withholding) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &withholdingConn{Connection: c, log: t.log, inflight: map[jsonrpc.ID]bool{}}, nil
}

// withholdingConn tracks the client's requests in flight, marks those the
// client cancels, and drops their responses on the way out. Only requests
// still in flight are marked, so an id the client reuses later is answered.
type withholdingConn struct {
	mcpsdk.Connection
	log *slog.Logger

	mu       sync.Mutex
	inflight map[jsonrpc.ID]bool // true once cancelled
}

func (c *withholdingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && err == nil {
		c.mu.Lock()
		switch {
		case r.IsCall():
			c.inflight[r.ID] = false
		case r.Method == cancelledMethod:
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(r.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					if _, ok := c.inflight[id]; ok {
						c.inflight[id] = true
					}
				}
			}
		}
		c.mu.Unlock()
	}
	return m, err
}

func (c *withholdingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Response); ok {
		c.mu.Lock()
		cancelled := c.inflight[r.ID]
		delete(c.inflight, r.ID)
		c.mu.Unlock()
		if cancelled {
			c.log.Debug("askbridge mcp: no response to a cancelled request", "request", r.ID.Raw())
			return nil
		}
	}
	return c.Connection.Write(ctx, m)
}
