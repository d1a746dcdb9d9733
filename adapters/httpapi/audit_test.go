package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// eventsFailAfterAPage is a store whose first read of the log returns a
// full page of events, and whose next read fails.
type eventsFailAfterAPage struct {
	core.Store
	reads atomic.Int32
}

func (s *eventsFailAfterAPage) Events(ctx context.Context, since int64, limit int) ([]core.Event, error) {
	if s.reads.Add(1) > 1 {
		return nil, errors.New("eventsFailAfterAPage: the store went away")
	}
	evs := make([]core.Event, limit)
	for i := range evs {
		evs[i] = core.Event{Seq: since + int64(i) + 1, QuestionID: "aaaaaaaaaaaaaaaaa", Kind: core.EventAsked, At: time.Unix(1, 0).UTC()}
	}
	return evs, nil
}

// TestExportCutShortFailsTheDownload: an export whose log read fails
// after its first page has gone out ends the download with an error, so
// curl and the client report it; before, the response ended cleanly and
// the short file read as the whole log, whose end verify then pinned.
func TestExportCutShortFailsTheDownload(t *testing.T) {
	e := newEnvOn(t, &eventsFailAfterAPage{Store: coretest.OpenStore(t)})
	req, err := http.NewRequestWithContext(e.ctx(), http.MethodGet, e.srv.URL+"/v1/audit/export", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+admin.Secret)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || err == nil {
		t.Fatalf("an export cut short: %d, %d bytes read, %v; want the download to fail", resp.StatusCode, len(body), err)
	}
}

// eventsPages is a store whose log is pages full pages of events.
type eventsPages struct {
	core.Store
	pages int32
	reads atomic.Int32
}

func (s *eventsPages) Events(ctx context.Context, since int64, limit int) ([]core.Event, error) {
	if s.reads.Add(1) > s.pages {
		return nil, nil
	}
	evs := make([]core.Event, limit)
	for i := range evs {
		evs[i] = core.Event{Seq: since + int64(i) + 1, QuestionID: "aaaaaaaaaaaaaaaaa", Kind: core.EventAsked, At: time.Unix(1, 0).UTC()}
	}
	return evs, nil
}

// TestExportHeadReadsOnePage: a HEAD of the export says whether a GET
// would start (its status and headers) after the one read a GET makes
// before its headers; before, it went on reading the log into a
// response that discards its body.
func TestExportHeadReadsOnePage(t *testing.T) {
	st := &eventsPages{Store: coretest.OpenStore(t), pages: 5}
	e := newEnvOn(t, st)
	r := e.do(http.MethodHead, "/v1/audit/export", &admin, "")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/x-ndjson") || len(r.body) != 0 {
		t.Fatalf("HEAD: %d %s %d bytes", r.status, r.header.Get("Content-Type"), len(r.body))
	}
	if n := st.reads.Load(); n != 1 {
		t.Fatalf("HEAD read the log %d times; want once", n)
	}
	st.reads.Store(0)
	if evs := exported(t, e.do(http.MethodGet, "/v1/audit/export", &admin, "").body); len(evs) != 5*1000 {
		t.Fatalf("GET: %d events, want the whole log of 5,000", len(evs))
	}
}
