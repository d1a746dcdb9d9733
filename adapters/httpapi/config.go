package httpapi

import (
	"net/http"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core/directive"
)

// Reconfigure puts a reloaded configuration's tokens and extra
// directives in force, both or neither: each is checked first, and
// nothing changes if either is bad. The console reads the same Keys, so
// its sign-ins change with the API's.
func (s *Server) Reconfigure(tokens []Token, extras []directive.Extra) error {
	if err := (Options{Tokens: tokens, Extras: extras}).Validate(); err != nil {
		return err
	}
	if err := s.keys.Replace(tokens); err != nil {
		return err // checked just above
	}
	own := append([]directive.Extra(nil), extras...)
	s.extras.Store(&own)
	return nil
}

// SetConfigDigest records which configuration file runs now, for GET
// /v1/config/digest.
func (s *Server) SetConfigDigest(d client.ConfigDigest) { s.digestOf.Store(&d) }

// configDigest answers which configuration file this replica runs
// (admin only): replicas that each reload their own copy can be compared.
func (s *Server) configDigest(w http.ResponseWriter, _ *http.Request) {
	d := s.digestOf.Load()
	if d == nil {
		d = &client.ConfigDigest{}
	}
	writeJSON(w, http.StatusOK, d)
}
