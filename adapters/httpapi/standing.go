package httpapi

import (
	"net/http"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// listStanding lists the standing approvals live now, for operators.
func (s *Server) listStanding(w http.ResponseWriter, r *http.Request) {
	all, err := s.svc.ListStandings(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if all == nil {
		all = []core.Standing{}
	}
	for i := range all {
		all[i] = client.ShownStanding(all[i])
	}
	writeJSON(w, http.StatusOK, client.StandingList{Standing: all})
}

// revokeStanding ends one at once; it takes no body.
func (s *Server) revokeStanding(w http.ResponseWriter, r *http.Request) {
	if !s.noBody(w, r, "revoke takes no request body") {
		return
	}
	st, err := s.svc.RevokeStanding(r.Context(), r.PathValue("id"), decider(caller(r)))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.ShownStanding(st))
}
