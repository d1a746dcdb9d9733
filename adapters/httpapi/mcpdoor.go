package httpapi

import (
	"net/http"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// The MCP door: the person driving an agent host can answer the agent's
// question in the host, through MCP elicitation. An `askbridge mcp` process
// serves that host over stdio and holds only the agent's token, so these
// two routes let it ask whether the question's route lets the host answer
// and record the host's answer. The decider is {mcp, <token name>}: the
// route must list it under mcp, as every surface's allowlist is checked
// in core. Only the agent's own questions are reachable; any other reads
// as unknown (law 6).

// hostDecider is how the host of an agent decides: the agent token's name
// is both id and name, as on the API.
func hostDecider(tok Token) core.Decider {
	return core.Decider{Surface: core.SurfaceMCP, ID: tok.Name, Name: tok.Name}
}

// mcpDoor says whether the host may answer the question.
func (s *Server) mcpDoor(w http.ResponseWriter, r *http.Request) {
	tok := caller(r)
	q, err := s.visible(r.Context(), tok, questionID(r))
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
	q, err := s.visible(r.Context(), tok, questionID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	o, err := s.svc.Answer(r.Context(), core.AnswerInput{
		QuestionID: q.ID, Decider: hostDecider(tok), Text: req.Answer, OptionID: req.ChosenOptionID, Items: req.Items,
	})
	s.outcome(w, r, o, err) // the agent's token: the agent's view
}
