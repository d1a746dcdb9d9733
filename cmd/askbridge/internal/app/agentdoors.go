package app

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// mountAgentDoors mounts what agents' hosts call besides the API: the
// MCP endpoint on mux and the hosts' HTTP hooks under the API's /v1, so
// the API authenticates and logs them as its own. Close stops both
// (stopMCP). maxWaits bounds the MCP calls waiting on one question as it
// bounds the API's waits (ASKBRIDGE_MAX_WAITS_PER_QUESTION; 0 is the
// default): one setting, so the bound on a replica's descriptors holds
// whichever door an agent uses; maxSessions bounds one caller's MCP
// sessions (ASKBRIDGE_MCP_MAX_SESSIONS_PER_CALLER; 0 is the default).
func (m *Main) mountAgentDoors(mux *http.ServeMux, api *httpapi.Server, svc *core.Service, maxWaits, maxSessions int) {
	stop, cancel := context.WithCancel(context.Background())
	m.stopMCP = cancel
	opts := mcp.Options{
		Version: versionString(),
		Caller:  func(r *http.Request) core.AgentID { return agentName(r.Context()) },
		Still:   stillOf,
		Stop:    stop,
		// A task's ttlMs: how long the bridge keeps its question.
		Retention:            svc.Retention,
		MaxWaitsPerQuestion:  maxWaits,
		MaxSessionsPerCaller: maxSessions,
		// What the door logs (an internal error whose detail its caller
		// never sees) goes to the program's log, as the API's does.
		Logger: slog.New(zerologHandler{log: m.Log.With().Str("component", "mcp").Logger()}),
	}
	opts.Unavailable = m.unavailable() // a failover's errors: said so, as the API's 503
	mux.Handle("/mcp", agentsOnly(api, "the MCP tools are for agent tokens", writeRefusal, mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, opts)))
	// A hook refused its token answers as the hook door answers a prompt
	// it cannot ask (hooks.Unread): a Claude Code PreToolUse gets "ask".
	api.Handle("POST /v1/hooks/{host}", agentsOnly(api, "hooks are answered for agent tokens", hooks.Unread, hooks.Handler(svc, hooks.Options{
		Agent:   func(r *http.Request) core.AgentID { return agentName(r.Context()) },
		MaxWait: httpapi.DefaultMaxWait,
		Stop:    stop,
		Log:     m.Log,
		Still:   stillOf,
	})))
}

type agentKey struct{}

// agentsOnly lets through requests that carry an API token with the agent
// role (or admin), and puts its name in the context: an MCP tool call, or
// a host's hook, asks in the name of the agent whose token made it. Other
// tokens are refused with refusal, written by refuse.
// Under /v1 the API refuses a request without a valid token before it
// gets here, through the door's Refuse (httpapi.Refuser).
func agentsOnly(api *httpapi.Server, refusal string, refuse func(http.ResponseWriter, *http.Request, int, error), h http.Handler) http.Handler {
	return agentDoor{api: api, refusal: refusal, refuse: refuse, h: h}
}

type agentDoor struct {
	api     *httpapi.Server
	refusal string
	refuse  func(http.ResponseWriter, *http.Request, int, error)
	h       http.Handler
}

func (d agentDoor) Refuse(w http.ResponseWriter, r *http.Request, status int, err error) {
	d.refuse(w, r, status, err)
}

func (d agentDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tok, wait, ok := d.api.Admit(r)
	if !ok {
		status, err := httpapi.AuthRefusal(w, wait) // 401, or 429 for a client out of guesses
		d.refuse(w, r, status, err)
		return
	}
	if tok.Role != httpapi.RoleAgent && tok.Role != httpapi.RoleAdmin {
		d.refuse(w, r, http.StatusForbidden, core.Errorf(core.CodeForbidden, "auth", "%s", d.refusal))
		return
	}
	ctx := context.WithValue(r.Context(), agentKey{}, tok.Agent())
	ctx = context.WithValue(ctx, stillKey{}, d.api.StillHolds(r, tok, httpapi.RoleAgent, httpapi.RoleAdmin))
	d.h.ServeHTTP(w, r.WithContext(ctx))
}

// stillKey holds the agent door's check that a request's token still
// holds (httpapi.Server.StillHolds), for a long call to make as it goes.
type stillKey struct{}

func stillOf(r *http.Request) func(context.Context) bool {
	f, _ := r.Context().Value(stillKey{}).(func(context.Context) bool)
	return f
}

// writeRefusal writes err in the API's error shape, with status.
func writeRefusal(w http.ResponseWriter, _ *http.Request, status int, err error) {
	httpapi.WriteError(w, status, core.ErrorCode(err), core.ErrorMessage(err))
}

func agentName(ctx context.Context) core.AgentID {
	name, _ := ctx.Value(agentKey{}).(core.AgentID)
	return name
}

// zerologHandler hands slog's records (the MCP door's, and the MCP SDK's)
// to the program's zerolog logger, at the nearest level, with their
// attributes as fields (a group's as "group.key"; "err" as zerolog's
// error field, as the program's own lines name it).
type zerologHandler struct {
	log    zerolog.Logger
	prefix string // the groups open, each followed by a dot
}

var _ slog.Handler = zerologHandler{}

func zerologLevel(l slog.Level) zerolog.Level {
	switch {
	case l < slog.LevelInfo:
		return zerolog.DebugLevel
	case l < slog.LevelWarn:
		return zerolog.InfoLevel
	case l < slog.LevelError:
		return zerolog.WarnLevel
	}
	return zerolog.ErrorLevel
}

func (h zerologHandler) Enabled(_ context.Context, l slog.Level) bool {
	z := zerologLevel(l)
	return z >= h.log.GetLevel() && z >= zerolog.GlobalLevel()
}

func (h zerologHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := make([]slog.Attr, 0, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	h.log.WithLevel(zerologLevel(r.Level)).Fields(h.fields(h.prefix, attrs, nil)).Msg(r.Message)
	return nil
}

func (h zerologHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.log = h.log.With().Fields(h.fields(h.prefix, attrs, nil)).Logger()
	return h
}

func (h zerologHandler) WithGroup(name string) slog.Handler {
	if name != "" {
		h.prefix += name + "."
	}
	return h
}

// fields appends attrs to out as zerolog's key and value pairs.
func (h zerologHandler) fields(prefix string, attrs []slog.Attr, out []any) []any {
	for _, a := range attrs {
		v := a.Value.Resolve()
		switch {
		case v.Kind() == slog.KindGroup:
			p := prefix
			if a.Key != "" {
				p += a.Key + "."
			}
			out = h.fields(p, v.Group(), out)
		case a.Key == "":
		case prefix == "" && a.Key == "err":
			out = append(out, zerolog.ErrorFieldName, v.Any())
		default:
			out = append(out, prefix+a.Key, v.Any())
		}
	}
	return out
}
