package console

import (
	"net/http"
	"slices"
	"strings"

	"github.com/askbridge/askbridge/core"
)

// step is what an answer left on the row it was given from (inbox rows
// answer in place): what the store now holds, or why nothing was
// recorded, or the choice waiting to be confirmed.
type step struct {
	Recorded []recorded
	Granted  []string
	Problem  line
	Confirm  *confirmView
}

// confirmView repeats a hard-to-reverse choice before it is recorded: its
// lines say what will be recorded, and its form posts the same fields
// again with confirm=yes.
type confirmView struct {
	QID          core.QuestionID
	Action, CSRF string
	Lines        []recorded
	Fields       []hiddenField
	// Page is set when the confirmation is a page of its own (no
	// script): its heading is then the page's one <h1>, where in an
	// inbox row it is an <h2> below the inbox's.
	Page bool
}

// hiddenField is one posted field carried over to the confirming submit.
type hiddenField struct{ Name, Value string }

// fetchHeader marks a post the inbox page sends itself to answer in
// place; the answer is then its row (or a confirmation) rather than a
// page. stepHeader says which came back.
const (
	fetchHeader = "X-Askbridge-Fetch"
	stepHeader  = "X-Askbridge-Step"
)

func inPlace(r *http.Request) bool { return r.Header.Get(fetchHeader) == "row" }

// confirmLines words what in will record, as the result page would.
// whole is a confirmation on a page of its own, where nothing else is in
// view: an approval's lines then hold the arguments of each call it
// approves, as the card shows them, so that the person confirms a call
// they can read, not a hash. In an inbox row the card's calls stay in
// view above the confirmation, and are not repeated.
func confirmLines(q *core.Question, in core.AnswerInput, whole bool) []recorded {
	var out []recorded
	add := func(label, value string) {
		if value != "" {
			out = append(out, recorded{Label: label, Value: value})
		}
	}
	add("Question", q.Text)
	switch q.Kind {
	case core.KindDecision:
		if o, ok := q.Option(in.OptionID); ok {
			add("Option", o.Title)
			add("Write-up sent to the agent", o.Writeup)
		} else {
			add("Option", in.OptionID)
		}
		add("Note", in.Text)
	case core.KindForm:
		for _, it := range in.Items {
			item, _ := q.Item(it.ItemID)
			val := item.Shown(it.OptionID, it.Text)
			label := item.Question
			if label == "" {
				label = it.ItemID
			}
			add(label, val)
		}
	case core.KindApproval:
		if q.Call != nil {
			add("Tool", q.Call.Tool)
			add("Arguments SHA-256", q.Call.ArgumentsSHA256)
			if whole && in.Arguments == nil {
				add("Arguments", core.PrettyJSON(q.Call.Arguments))
			}
		}
		if in.OptionID != "" {
			add("Verdict", verdictWord(in.OptionID))
		}
		if in.Arguments != nil {
			add("Approved arguments", core.PrettyJSON(in.Arguments))
		}
		if in.Standing != nil {
			add("Standing approval", "later asks for this tool are approved at once ("+string(in.Standing.Scope)+")")
		}
		for _, c := range in.Calls {
			var call core.BatchCall
			for _, bc := range q.Calls {
				if bc.ToolCallID == c.ToolCallID {
					call = bc
				}
			}
			v := verdictWord(c.OptionID)
			if c.Reason != "" {
				v += ": " + c.Reason
			}
			add(call.Tool+" ("+c.ToolCallID+")", v)
			// A call's "Edit and approve" runs the edited arguments, not
			// those asked: shown as a single approval's edit is.
			switch {
			case c.Arguments != nil:
				add("Approved arguments", core.PrettyJSON(c.Arguments))
			case whole && c.OptionID == core.ApproveOption && call.Arguments != nil:
				add("Arguments", core.PrettyJSON(call.Arguments))
			}
		}
		// A batch's approve-all approves every call still undecided.
		if whole && q.IsBatch() && len(in.Calls) == 0 && in.OptionID == core.ApproveOption {
			for _, co := range core.CallOutcomes(q) {
				if co.Decision == nil {
					add(co.Call.Tool+" ("+co.Call.ToolCallID+")", verdictWord(core.ApproveOption))
					add("Arguments", core.PrettyJSON(co.Call.Arguments))
				}
			}
		}
		add("Reason", in.Text)
	}
	return out
}

func verdictWord(option string) string {
	switch option {
	case core.ApproveOption:
		return "approve"
	case core.DenyOption:
		return "deny"
	}
	return option
}

// confirm shows a hard-to-reverse choice back before it is recorded:
// in place on its inbox row, or as a page of its own without script.
func (s *Server) confirm(w http.ResponseWriter, r *http.Request, sess *session, q *core.Question, in core.AnswerInput) {
	c := &confirmView{QID: q.ID, Action: r.URL.Path, CSRF: masked(sess.CSRF), Lines: confirmLines(q, in, !inPlace(r))}
	for name, vals := range r.PostForm {
		if name == "csrf" || name == fieldConfirm {
			continue
		}
		for _, v := range vals {
			c.Fields = append(c.Fields, hiddenField{name, v})
		}
	}
	slices.SortStableFunc(c.Fields, func(a, b hiddenField) int { return strings.Compare(a.Name, b.Name) })
	if inPlace(r) {
		w.Header().Set(stepHeader, "confirm")
		s.render(w, r, http.StatusOK, "confirm-part", c)
		return
	}
	c.Page = true
	s.render(w, r, http.StatusOK, "confirm", s.page(sess, map[string]any{"Title": "Confirm", "C": c}))
}

// renderRow sends an inbox row as it now stands with what the answer
// left on it.
func (s *Server) renderRow(w http.ResponseWriter, r *http.Request, status int, q *core.Question, v viewer, st *step) {
	c := s.cardOf(q, v)
	c.Src = rowSrc(q.ID, "") // the page keeps its own, with its filters
	c.Step = st
	kind := "recorded"
	if len(st.Problem) > 0 {
		kind = "refused"
	}
	w.Header().Set(stepHeader, kind)
	s.render(w, r, status, "row", c)
}
