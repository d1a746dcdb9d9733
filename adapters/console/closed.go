package console

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// closedPage is how many closed questions one page of the Closed view
// shows; the export reads pages of exportPage until the search ends.
const (
	closedPage = 50
	exportPage = 500
	// maxExport bounds one export, so a mistaken click on an unfiltered
	// history of years does not hold a connection for minutes; the
	// filters narrow it.
	maxExport = 100_000
)

// dateForm is how the Closed view's date fields read and write a day.
const dateForm = "2006-01-02"

// closedForm is the Closed view's filters as the form and the URL hold
// them, so a search can be shared as a link and exported as it stands.
type closedForm struct {
	Route, Kind, Agent, Decider, Outcome, Closer, From, To, Text string
}

// parseClosed reads the filters from the URL into the store's query.
// Dates are days in UTC; To is the last day included.
func parseClosed(v url.Values) (closedForm, core.ClosedQuery, error) {
	f := closedForm{
		Route: strings.TrimSpace(v.Get("route")), Kind: v.Get("kind"), Agent: strings.TrimSpace(v.Get("agent")),
		Decider: strings.TrimSpace(v.Get("decider")), Outcome: v.Get("outcome"), Closer: v.Get("closer"),
		From: strings.TrimSpace(v.Get("from")), To: strings.TrimSpace(v.Get("to")), Text: strings.TrimSpace(v.Get("q")),
	}
	cq := core.ClosedQuery{Route: f.Route, Kind: core.Kind(f.Kind), Agent: core.AgentID(f.Agent), Decider: f.Decider,
		Outcome: core.ClosedAs(f.Outcome), Closer: core.Closer(f.Closer), Text: f.Text}
	if f.From != "" {
		d, err := time.Parse(dateForm, f.From)
		if err != nil {
			return f, cq, fmt.Errorf("from %q is not a date such as 2026-03-01", f.From)
		}
		cq.From = d
	}
	if f.To != "" {
		d, err := time.Parse(dateForm, f.To)
		if err != nil {
			return f, cq, fmt.Errorf("to %q is not a date such as 2026-03-31", f.To)
		}
		cq.To = d.AddDate(0, 0, 1)
	}
	if err := cq.Validate(); err != nil {
		return f, cq, fmt.Errorf("%s", core.ErrorMessage(err))
	}
	return f, cq, nil
}

// Query is the filters as a URL query, "" when there are none.
func (f closedForm) Query() string {
	v := url.Values{}
	for k, val := range map[string]string{"route": f.Route, "kind": f.Kind, "agent": f.Agent, "decider": f.Decider,
		"outcome": f.Outcome, "closer": f.Closer, "from": f.From, "to": f.To, "q": f.Text} {
		if val != "" {
			v.Set(k, val)
		}
	}
	return v.Encode()
}

// Any reports whether any filter is set.
func (f closedForm) Any() bool { return f != closedForm{} }

// closedRow is one closed question as the list and the export show it.
type closedRow struct {
	Q       *core.Question
	Title   string
	Outcome core.ClosedAs
	Closer  core.Closer
	Line    string
	// Shown is Line as the page draws it, each name isolated.
	Shown  line
	Choice string
}

func closedRowOf(q *core.Question) closedRow {
	q.Normalize()
	l := card.OutcomeLine(q)
	return closedRow{Q: q, Title: firstLine(q.Text), Outcome: core.ClosedAsOf(q), Closer: core.CloserOf(q),
		Line: l, Shown: namedLine(l, namesOf(q)), Choice: card.ChoiceLabel(q)}
}

// closed is the Closed view: a search of the history, a page at a time,
// newest close first, each row linking to the question's page.
func (s *Server) closed(w http.ResponseWriter, r *http.Request, sess *session) {
	f, cq, err := parseClosed(r.URL.Query())
	data := map[string]any{"Title": "Closed", "Form": f, "Kinds": []string{"clarification", "decision", "approval", "form"},
		"Outcomes": core.ClosedOutcomes, "Closers": closerNames}
	if err != nil {
		data["Problem"] = err.Error()
		s.render(w, r, http.StatusBadRequest, "closed", s.page(sess, data))
		return
	}
	p, err := s.svc.SearchClosed(r.Context(), cq, r.URL.Query().Get("after"), closedPage)
	if core.ErrorCode(err) == core.CodeInvalid {
		data["Problem"] = "That link to a further page is not one this console made; start the search again."
		s.render(w, r, http.StatusBadRequest, "closed", s.page(sess, data))
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	rows := make([]closedRow, len(p.Questions))
	for i, q := range p.Questions {
		rows[i] = closedRowOf(q)
	}
	data["Rows"], data["ReadTo"] = rows, p.ReadTo
	if p.Next != "" {
		v, _ := url.ParseQuery(f.Query()) // our own encoding: it parses
		v.Set("after", p.Next)
		data["Older"] = "/closed?" + v.Encode()
	}
	data["Export"] = "/closed.csv"
	if q := f.Query(); q != "" {
		data["Export"] = "/closed.csv?" + q
	}
	s.render(w, r, http.StatusOK, "closed", s.page(sess, data))
}

// closerNames are the closers a search may filter on, in the order the
// form offers them.
var closerNames = []core.Closer{core.CloserPerson, core.CloserQuorum, core.CloserParts, core.CloserStanding, core.CloserPolicy,
	core.CloserDecline, core.CloserTimeout, core.CloserExpiry, core.CloserAgentCancel, core.CloserOperatorCancel, core.CloserBridgeCancel}

// exportHeader names the export's columns.
var exportHeader = []string{"id", "closed_at", "asked_at", "kind", "route", "agent", "run_id", "reversibility",
	"outcome", "closer", "outcome_line", "question", "choice", "link"}

// exportClosed streams the filtered history as CSV, page by page from the
// store, with a header row. A cell a spreadsheet would run as a formula
// is defused (csvCell). An error after the first row can only cut the
// file short, so it ends with a last line that says so.
func (s *Server) exportClosed(w http.ResponseWriter, r *http.Request, _ *session) {
	_, cq, err := parseClosed(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	p, err := s.svc.SearchClosed(ctx, cq, "", exportPage)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="askbridge-closed-`+s.now().UTC().Format("20060102-1504")+`.csv"`)
	h.Set("Cache-Control", "no-store")
	out := csv.NewWriter(w)
	_ = out.Write(exportHeader)
	rows := 0
	for {
		for _, q := range p.Questions {
			row := closedRowOf(q)
			cells := []string{string(q.ID), iso(row.Q.Resolution.At), iso(q.CreatedAt), string(q.Kind), q.Route, string(q.Agent), string(q.RunID),
				string(q.Reversibility), string(row.Outcome), string(row.Closer), row.Line, q.Text, row.Choice, "/q/" + url.PathEscape(string(q.ID))}
			for i := range cells {
				cells[i] = csvCell(cells[i])
			}
			_ = out.Write(cells)
			rows++
		}
		out.Flush()
		if out.Error() != nil || p.Next == "" {
			return
		}
		if rows >= maxExport {
			_ = out.Write([]string{csvCell(fmt.Sprintf("# cut at %d rows: narrow the filters to export the rest", maxExport))})
			out.Flush()
			return
		}
		if p, err = s.svc.SearchClosed(ctx, cq, p.Next, exportPage); err != nil {
			if ctx.Err() == nil {
				s.log.Error().Err(err).Msg("console: export cut short")
				_ = out.Write([]string{"# the export was cut short by an error; try again"})
				out.Flush()
			}
			return
		}
	}
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// csvCell defuses a cell a spreadsheet would read as a formula (one
// starting with =, +, -, @, or a tab or carriage return that some strip
// first) by putting a quote mark before it, which spreadsheets show as
// text and do not run. People and agents write these cells.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
