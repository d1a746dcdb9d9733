package httpapi

import (
	"fmt"
	"net/http"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core/directive"
)

// Reconfigure puts new tokens and extra directives in force, both or
// neither: each is checked first, and nothing changes if either is bad.
// The console reads the same Keys, so its sign-ins change with the API's.
// It is for a service whose configuration carries no tokens: where it
// does (Options.Tokens), the tokens change with it, and a program
// reloading its file sets the directives alone (SetExtras).
func (s *Server) Reconfigure(tokens []Token, extras []directive.Extra) error {
	if err := (Options{Tokens: tokens, Extras: extras}).Validate(); err != nil {
		return err
	}
	if err := s.keys.Replace(tokens); err != nil {
		return fmt.Errorf("httpapi: %w", err)
	}
	return s.SetExtras(extras)
}

// SetExtras puts a reloaded configuration's extra directives in force, or
// changes nothing if they are bad.
func (s *Server) SetExtras(extras []directive.Extra) error {
	if err := directive.ValidateExtras(extras); err != nil {
		return fmt.Errorf("httpapi: %w", err)
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
