package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// clientBackend lets "askbridge mcp" (a process an agent host starts) park
// questions on a running server: the stdio process holds no store of its
// own, so any number of agents share one bridge.
type clientBackend struct{ c *client.Client }

func (b clientBackend) Ask(ctx context.Context, in core.AskInput) (*core.Question, error) {
	q, err := b.c.Ask(ctx, client.AskRequest{
		Kind: in.Kind, Question: in.Text, Context: in.Context, Reversibility: in.Reversibility,
		Route: in.Route, RunID: in.RunID, ToolCallID: in.ToolCallID, Options: in.Options, Items: in.Items,
		Tool: in.Tool, Arguments: in.Arguments, Timeout: client.Duration(in.Timeout),
		OnTimeout: in.OnTimeout, MaxReasks: in.MaxReasks, Labels: in.Labels,
	})
	return q, coded(err)
}

// coded turns the server's refusal into core's error, so the MCP tool
// shows the agent the server's own message ("a decision needs exactly one
// recommended option") instead of a generic internal error.
func coded(err error) error {
	var e *client.Error
	if errors.As(err, &e) && e.Code != "" && e.Code != string(core.CodeInternal) {
		return &core.Error{Code: core.Code(e.Code), Op: "askbridge server", Message: e.Message}
	}
	return err
}

// Wait long-polls until the question closes or ctx ends; then, as the
// Backend contract says, it returns the question as it stands.
func (b clientBackend) Wait(ctx context.Context, id string) (*core.Question, error) {
	for {
		res, err := b.c.WaitOnce(ctx, id, time.Minute)
		if ctx.Err() != nil {
			return b.c.Get(context.WithoutCancel(ctx), id)
		}
		if err != nil {
			return nil, coded(err)
		}
		if res.State != core.StateOpen {
			return res.Question, nil
		}
	}
}

func cmdMCP(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	run := fs.String("run", getenv("ASKBRIDGE_RUN_ID"), "the run id questions belong to when a tool call gives none")
	route := fs.String("route", "", "the route questions take when a tool call gives none")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	c, err := newClient(getenv)
	if err != nil {
		return fail(stderr, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil)) // stdout carries the protocol
	if err := mcp.ServeStdio(ctx, clientBackend{c}, mcp.Options{RunID: *run, Route: *route, Version: versionString(), Logger: log}); err != nil && ctx.Err() == nil {
		return fail(stderr, err)
	}
	return 0
}
