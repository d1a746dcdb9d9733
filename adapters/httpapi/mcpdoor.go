package httpapi

import (
	"context"
	"net/http"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// The MCP door: the person driving an agent host can answer the agent's
// question in the host, through MCP elicitation. An `askbridge mcp` process
// serves that host over stdio and holds only the agent's token, so these
// routes let it ask whether the question's route lets the host answer,
// record the host's answer, and keep and read the host's decline of a
// task's form (HostDeclines). The decider is {mcp, <token name>}: the
// route must list it under mcp, as every surface's allowlist is checked
// in core. Only the agent's own questions are reachable, by an admin's
// token as by an agent's (hosted): any other reads as unknown (law 6).

// mcpRoutes registers the MCP door's routes (routes lists the rest): the
// declines' only where the program keeps them.
func (s *Server) mcpRoutes() {
	s.v1("GET /v1/questions/{id}/mcp", "read the MCP door", s.mcpDoor, RoleAgent)
	s.v1("POST /v1/questions/{id}/mcp/answer", "answer through the MCP door", s.mcpAnswer, RoleAgent)
	if s.declines != nil {
		s.v1("POST /v1/questions/{id}/mcp/decline", "decline through the MCP door", s.mcpDecline, RoleAgent)
		s.v1("GET /v1/questions/{id}/mcp/decline", "read the MCP door's declines", s.mcpDeclined, RoleAgent)
	}
}

// HostDeclines keeps an agent's MCP host's declines of its task forms,
// so that a task whose form was declined goes back to working on every
// replica, rather than asking the form again or showing it outstanding
// for good. Its methods are the MCP adapter's (mcp.HostDeclines), which
// its ServiceBackend implements for one agent: where a decline is kept
// and for how long is that adapter's to say, once.
type HostDeclines interface {
	DeclineHostForm(ctx context.Context, id core.QuestionID, key string) error
	HostFormDeclined(ctx context.Context, id core.QuestionID, key string) (bool, error)
}

// maxFormKey bounds a form's key: the MCP door's keys are some forty
// bytes, and each is part of a store key.
const maxFormKey = 128

// formKey checks the key of a task's form as a caller gave it: one to
// maxFormKey letters, digits, dots, dashes and underscores, which every
// key the MCP door makes is.
func formKey(key string) (string, error) {
	if key == "" {
		return "", invalid("key is required: the key of the task's form, as its inputRequests name it")
	}
	if len(key) > maxFormKey {
		return "", invalid("key is %d bytes; at most %d", len(key), maxFormKey)
	}
	for _, c := range []byte(key) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return "", invalid("key %q may hold only letters, digits, '.', '-' and '_'", key)
		}
	}
	return key, nil
}

// hosted returns the question if tok's agent asked it. The door is the
// asking agent's host's, whatever the token's role: an admin's token
// reaches its own questions here, as on /mcp (mcp.ServiceBackend), and
// not, as {mcp, <admin>}, every agent's on a route listing it under mcp.
func (s *Server) hosted(ctx context.Context, tok Token, id core.QuestionID) (*core.Question, error) {
	q, err := s.svc.Get(ctx, id)
	return askedBy(tok.Agent(), q, err)
}

// hostDecider is how the host of an agent decides: the agent token's name
// is both id and name, as on the API.
func hostDecider(tok Token) core.Decider {
	return core.Decider{Surface: core.SurfaceMCP, ID: tok.Name, Name: tok.Name}
}

// mcpDoor says whether the host may answer the question.
func (s *Server) mcpDoor(w http.ResponseWriter, r *http.Request) {
	tok := caller(r)
	q, err := s.hosted(r.Context(), tok, questionID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.MCPDoorResponse{QuestionID: q.ID, MayAnswer: q.Open() && s.svc.MayAnswer(q, hostDecider(tok))})
}

// mcpAnswer records the host's answer through the chokepoint. A question
// someone else closed first gives 409 with who closed it, when and how.
// The body is client.MCPAnswerRequest, decoded strictly, so a field the
// door does not take (an edit, calls, a standing approval) is refused
// rather than dropped.
func (s *Server) mcpAnswer(w http.ResponseWriter, r *http.Request) {
	var req client.MCPAnswerRequest
	if !s.decode(w, r, &req, true) {
		return
	}
	tok := caller(r)
	q, err := s.hosted(r.Context(), tok, questionID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	o, err := s.svc.Answer(r.Context(), core.AnswerInput{
		QuestionID: q.ID, Decider: hostDecider(tok), Text: req.Answer, OptionID: req.ChosenOptionID, Items: req.Items,
	})
	s.outcome(w, r, o, err) // the agent's token: the agent's view
}

// mcpDecline keeps that the agent's host declined form key of the
// question: the question stays open for chat, and the form is not asked
// again. The body is client.MCPDeclineRequest, decoded strictly.
func (s *Server) mcpDecline(w http.ResponseWriter, r *http.Request) {
	var req client.MCPDeclineRequest
	if !s.decode(w, r, &req, true) {
		return
	}
	key, err := formKey(req.Key)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q, err := s.hosted(r.Context(), caller(r), questionID(r))
	if err == nil {
		err = s.declines(q.Agent).DeclineHostForm(r.Context(), q.ID, key)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.MCPDeclineResponse{QuestionID: q.ID, Key: key, Declined: true})
}

// mcpDeclined says whether the agent's host declined form ?key= of the
// question.
func (s *Server) mcpDeclined(w http.ResponseWriter, r *http.Request) {
	key, err := formKey(r.URL.Query().Get("key"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q, err := s.hosted(r.Context(), caller(r), questionID(r))
	var declined bool
	if err == nil {
		declined, err = s.declines(q.Agent).HostFormDeclined(r.Context(), q.ID, key)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.MCPDeclineResponse{QuestionID: q.ID, Key: key, Declined: declined})
}
