package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/directive"
)

// digest is "what did you ask me while I was away": since is required,
// until defaults to now; decider (surface:id) keeps the questions that
// decider may answer, holding the roles given as role (repeatable, or
// comma-separated) since the API cannot ask a platform who holds what;
// person keeps what a configured person may answer from any of their
// accounts; route keeps one configured route's.
func (s *Server) digest(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	since, err := timeParam(v.Get("since"), "since", true)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	until, err := timeParam(v.Get("until"), "until", false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var d *core.Decider
	if raw := v.Get("decider"); raw != "" {
		surface, id, ok := strings.Cut(raw, ":")
		sf, perr := core.ParseSurface(surface)
		if !ok || perr != nil || strings.TrimSpace(id) == "" {
			s.fail(w, r, invalid("decider %q must be surface:id, with surface %s", raw, core.SurfaceNames(core.AnswerSurfaces)))
			return
		}
		d = &core.Decider{Surface: sf, ID: id, Name: id, Roles: listParam(v["role"])}
	} else if len(v["role"]) > 0 {
		s.fail(w, r, invalid("role is given with decider: it says which roles that decider holds"))
		return
	}
	// A route not configured now is refused, as an unknown person is:
	// its empty lists would read as "nothing was asked there".
	route := v.Get("route")
	if _, ok := s.svc.Route(route); route != "" && !ok {
		s.fail(w, r, invalid("no route named %q", route))
		return
	}
	out, err := s.svc.Digest(r.Context(), core.DigestQuery{From: since, To: until, Decider: d, Person: v.Get("person"), Route: route})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.DigestOf(out))
}

// listParam reads a repeatable parameter that may also be comma-separated.
func listParam(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// people lists the configured people and groups, without their accounts.
func (s *Server) people(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.svc.People())
}

func timeParam(raw, name string, required bool) (time.Time, error) {
	if raw == "" {
		if required {
			return time.Time{}, invalid("%s is required: an RFC 3339 time such as 2026-01-02T15:04:05Z", name)
		}
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return time.Time{}, invalid("%s %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", name, raw)
	}
	return t, nil
}

// directive returns the standing "ask rather than guess" text for an
// agent's autonomy level and tier (full when absent), with the
// operator's extras for its role and department.
func (s *Server) directive(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	raw := v.Get("autonomy")
	if raw == "" {
		s.fail(w, r, invalid("autonomy is required: one of %s", joinAutonomies()))
		return
	}
	a, err := directive.ParseAutonomy(raw)
	if err != nil {
		s.fail(w, r, invalid("autonomy %q is not one of %s", raw, joinAutonomies()))
		return
	}
	t := directive.TierFull
	if raw := v.Get("tier"); raw != "" {
		if t, err = directive.ParseTier(raw); err != nil {
			s.fail(w, r, invalid("tier %q is not one of %s", raw, joinTiers()))
			return
		}
	}
	text, err := directive.Text(a, t, v.Get("role"), v.Get("department"), *s.extras.Load())
	if err != nil {
		s.fail(w, r, core.Internal("directive", err)) // extras were checked in New
		return
	}
	writeJSON(w, http.StatusOK, client.DirectiveResponse{Text: text})
}

// retention says how long a closed question is kept, as the
// configuration stands now (a reload changes it): an agent may read it
// to know how long it can come back for an answer, and `askbridge mcp`
// makes its tasks' ttlMs from it, as /mcp does.
func (s *Server) retention(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, client.RetentionResponse{Retention: client.Duration(s.svc.Retention())})
}

func joinAutonomies() string {
	names := make([]string, len(directive.Autonomies))
	for i, a := range directive.Autonomies {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

func joinTiers() string {
	names := make([]string, len(directive.Tiers))
	for i, t := range directive.Tiers {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}
