package httpapi_test

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	"github.com/askbridge/askbridge/internal/coretest"
)

// exported reads an export body's events.
func exported(t *testing.T, body []byte) []core.Event {
	t.Helper()
	var evs []core.Event
	if err := audit.Lines(bytes.NewReader(body), func(e core.Event) error { evs = append(evs, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return evs
}

func verifyExport(t *testing.T, evs []core.Event, opt audit.Options) audit.Report {
	t.Helper()
	rep, err := audit.Verify(audit.Key(coretest.AuditKey), func(yield func(core.Event) error) error {
		for _, e := range evs {
			if err := yield(e); err != nil {
				return err
			}
		}
		return nil
	}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestAuditExport: the export is the log with its chain, as NDJSON,
// which verifies; a later export from the first's last seq continues
// it; only admin may take one.
func TestAuditExport(t *testing.T) {
	e := newEnv(t)
	q1 := e.ask(agentA, "run-1")
	e.ask(agentA, "run-1")
	if _, err := e.as(operator).Answer(e.ctx(), q1, client.AnswerRequest{Answer: "yes"}); err != nil {
		t.Fatal(err)
	}
	r := e.do("GET", "/v1/audit/export", &admin, "")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/x-ndjson") {
		t.Fatalf("export: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	first := exported(t, r.body)
	if len(first) != 3 || first[0].Chain == nil || first[0].Chain.Prev != "" {
		t.Fatalf("export: %d events, first %+v", len(first), first)
	}
	if rep := verifyExport(t, first, audit.Options{}); rep.Break != nil || rep.Events != 3 {
		t.Fatalf("export verified: %+v", rep)
	}

	// More happens; the next export starts after the first's last seq.
	q3 := e.ask(agentA, "run-2")
	if _, err := e.as(operator).Decline(e.ctx(), q3); err != nil {
		t.Fatal(err)
	}
	last := first[len(first)-1]
	r = e.do("GET", "/v1/audit/export?since="+strconv.FormatInt(last.Seq, 10), &admin, "")
	later := exported(t, r.body)
	if len(later) != 2 || later[0].Chain.Prev != last.Chain.Hash {
		t.Fatalf("continued export: %+v; want its first event linked to %s", later, last.Chain.Hash)
	}
	if rep := verifyExport(t, later, audit.Options{}); rep.Break == nil {
		t.Fatal("a continued export verified as a whole log")
	}
	if rep := verifyExport(t, later, audit.Options{MidChain: true}); rep.Break != nil || len(rep.MidChain) != 1 {
		t.Fatalf("continued export on its own: %+v", rep)
	}
	if rep := verifyExport(t, append(first, later...), audit.Options{}); rep.Break != nil || rep.Events != 5 {
		t.Fatalf("both exports as one log: %+v", rep)
	}
	// An event edited in the file is found, by its seq.
	edited := append([]core.Event(nil), first...)
	edited[1].Reason = "edited"
	if rep := verifyExport(t, edited, audit.Options{}); rep.Break == nil || rep.Break.Seq != first[1].Seq {
		t.Fatalf("edited export: %+v", rep)
	}

	for _, tok := range []httpapi.Token{operator, observer, agentA} {
		if r := e.do("GET", "/v1/audit/export", &tok, ""); r.status != http.StatusForbidden {
			t.Fatalf("%s's export: %d %s", tok.Name, r.status, r.body)
		}
	}
	if r := e.do("GET", "/v1/audit/export?since=-1", &admin, ""); r.status != http.StatusBadRequest {
		t.Fatalf("since=-1: %d %s", r.status, r.body)
	}
}
