package console

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// The fields of an approval's forms beyond the common ones (answer.go):
// arguments carries an editor's JSON for "Edit and approve", standing
// the scope of a "don't ask again", and a batch's call forms name one
// tool call with call, deciding it with call_option and call_text.
const (
	fieldArguments  = "arguments"
	fieldStanding   = "standing"
	fieldCall       = "call"
	fieldCallOption = "call_option"
	fieldCallText   = "call_text"
)

// callView is one tool call as a card shows it: the arguments (as
// approved, once edited), their full hash, its verdict once decided, and
// while open the buttons core offers for it.
type callView struct {
	QID       core.QuestionID
	CSRF      string
	Index     int
	ID        string // the tool call id; "" for a single approval
	Tool      string
	Arguments string
	SHA256    string
	// AskedSHA256 is the hash as asked, when an edit changed it.
	AskedSHA256 string
	Answer      *card.ItemAnswered
	// EditLabel and Prefill are the editor's button and starting text;
	// "" when the call's arguments may not be edited (or it is decided).
	EditLabel, Prefill string
	// EditableKeys names what an edit may change, for the editor's label.
	EditableKeys string
	Standing     []standingButton
}

// standingButton is one "approve, and don't ask again" choice.
type standingButton struct {
	Label string
	Scope core.StandingScope
}

// callsOf fills c's tool calls from core's own card, so that the console
// offers exactly the buttons, labels and verdicts every other surface
// does.
func callsOf(c *cardView, q *core.Question) {
	if q.Kind != core.KindApproval || (q.Call == nil && !q.IsBatch()) {
		return
	}
	view := card.New(q, core.MessageRef{Surface: core.SurfaceConsole})
	if p := view.Progress; p != nil && q.IsBatch() {
		c.Progress = p.String()
	}
	outcomes := core.CallOutcomes(q)
	for _, s := range view.Sections {
		if s.Kind != card.SectionCall {
			continue
		}
		cv := callView{QID: q.ID, CSRF: c.CSRF, Index: s.Index, Tool: s.Title, Arguments: s.Body, Answer: s.Answer}
		var editable *core.Editable
		switch {
		case q.IsBatch() && s.Index < len(outcomes):
			co := outcomes[s.Index]
			cv.ID, cv.SHA256, editable = co.Call.ToolCallID, co.Call.ArgumentsSHA256, co.Call.Editable
			if d := co.Decision; d != nil && d.Edit != nil {
				cv.SHA256, cv.AskedSHA256 = d.Edit.ArgumentsSHA256, d.Edit.AskedArgumentsSHA256
			}
		case !q.IsBatch():
			cv.SHA256, editable = q.Call.ArgumentsSHA256, q.Call.Editable
			if r := q.Resolution; r != nil && r.Edit != nil {
				cv.SHA256, cv.AskedSHA256 = r.Edit.ArgumentsSHA256, r.Edit.AskedArgumentsSHA256
			}
		}
		cv.EditableKeys = editableKeys(editable)
		for _, a := range s.Actions {
			switch a.Ref.Action {
			case core.RefEdit:
				cv.EditLabel, cv.Prefill = strings.TrimPrefix(a.Label, numPrefix(q, s.Index)), a.Prefill
			case core.RefStanding:
				scope := core.StandingRun
				if a.Ref.Option == 1 {
					scope = core.StandingAgent
				}
				cv.Standing = append(cv.Standing, standingButton{Label: strings.TrimPrefix(a.Label, numPrefix(q, s.Index)), Scope: scope})
			}
		}
		if q.IsBatch() {
			c.Calls = append(c.Calls, cv)
		} else {
			c.Call = &cv
		}
	}
}

// editableKeys words which arguments an edit may change.
func editableKeys(e *core.Editable) string {
	switch {
	case !e.Any():
		return ""
	case e.All:
		return "any key"
	case len(e.Keys) == 1:
		return "only " + e.Keys[0]
	}
	return "only " + strings.Join(e.Keys, ", ")
}

// numPrefix is the "1. " chat cards put before a batch call's buttons,
// which share a row there; the console shows them under their call.
func numPrefix(q *core.Question, i int) string {
	if !q.IsBatch() {
		return ""
	}
	return strconv.Itoa(i+1) + ". "
}

// approvalInput adds to in what an approval's forms post: edited
// arguments, a standing approval, or one batch call's decision. A form
// that carries an editor must carry arguments in it.
func approvalInput(r *http.Request, in *core.AnswerInput) error {
	args, edited := r.PostForm[fieldArguments]
	raw := ""
	if edited {
		raw = strings.TrimSpace(strings.Join(args, ""))
		if raw == "" {
			return core.Errorf(core.CodeInvalid, "edit", "the edited arguments are missing: give them as a JSON object")
		}
	}
	var standing *core.StandingRequest
	if sc := r.PostFormValue(fieldStanding); sc != "" {
		standing = &core.StandingRequest{Scope: core.StandingScope(sc)}
	}
	if call := r.PostFormValue(fieldCall); call != "" {
		cd := core.CallDecision{ToolCallID: call, OptionID: r.PostFormValue(fieldCallOption), Reason: r.PostFormValue(fieldCallText)}
		if edited {
			cd.Arguments = json.RawMessage(raw)
		}
		if standing != nil {
			cd.Standing = standing
			if cd.OptionID == "" {
				cd.OptionID = core.ApproveOption
			}
		}
		in.Calls = []core.CallDecision{cd}
		return nil
	}
	// A batch decided in one submit: call_option.ID (and call_text.ID)
	// for every call given a verdict; a call left blank stays undecided.
	for k := range r.PostForm {
		if id, ok := strings.CutPrefix(k, fieldCallOption+"."); ok && r.PostForm.Get(k) != "" {
			in.Calls = append(in.Calls, core.CallDecision{ToolCallID: id, OptionID: r.PostForm.Get(k), Reason: r.PostForm.Get(fieldCallText + "." + id)})
		}
	}
	slices.SortFunc(in.Calls, func(a, b core.CallDecision) int { return strings.Compare(a.ToolCallID, b.ToolCallID) })
	if edited {
		in.Arguments = json.RawMessage(raw)
	}
	if standing != nil {
		in.Standing = standing
		if in.OptionID == "" {
			in.OptionID = core.ApproveOption
		}
	}
	return nil
}

// standingView is one standing approval as the standing page lists it.
type standingView struct {
	S       core.Standing
	Granted string // who granted it, as cards name people
	Reach   string
}

func standingViewOf(st core.Standing) standingView {
	v := standingView{S: st, Granted: card.PersonName(st.GrantedBy)}
	if st.Scope == core.StandingRun {
		v.Reach = "the rest of run " + string(st.RunID)
	} else {
		v.Reach = "agent " + string(st.Agent) + " until " + st.Until.UTC().Format(timeFormat)
	}
	return v
}

// standings lists the standing approvals live now; operators and admins
// may revoke them, observers only look.
func (s *Server) standings(w http.ResponseWriter, r *http.Request, sess *session) {
	s.standingsPage(w, r, sess, http.StatusOK, "", "")
}

func (s *Server) standingsPage(w http.ResponseWriter, r *http.Request, sess *session, status int, done, problem string) {
	all, err := s.svc.ListStandings(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	views := make([]standingView, 0, len(all))
	for _, st := range all {
		views = append(views, standingViewOf(st))
	}
	s.render(w, r, status, "standing", s.page(sess, map[string]any{
		"Title": "Standing approvals", "Standings": views, "MayRevoke": sess.account.Role.MayAnswer(),
		"Done": done, "Problem": problem,
	}))
}

// revokeStanding ends a standing approval at once, through core, which
// records who revoked it.
func (s *Server) revokeStanding(w http.ResponseWriter, r *http.Request, sess *session) {
	if !sess.account.Role.MayAnswer() {
		s.forbidden(w, r, "An observer token may look but not revoke. Nothing was changed.")
		return
	}
	st, err := s.svc.RevokeStanding(r.Context(), r.PathValue("id"), decider(sess.account))
	switch {
	case core.ErrorCode(err) == core.CodeNotFound:
		s.standingsPage(w, r, sess, http.StatusNotFound, "", "There is no such standing approval: it may have been revoked already, or ended with its run.")
	case err != nil:
		s.internal(w, r, err)
	default:
		s.standingsPage(w, r, sess, http.StatusOK, "Revoked "+st.ID+" ("+st.Tool+"): later asks for it are asked again.", "")
	}
}

// grantedLine says what a standing approval an answer granted covers.
func grantedLine(st core.Standing) string {
	v := standingViewOf(st)
	return st.ID + ": " + st.Tool + " for " + v.Reach + ", granted " + st.GrantedAt.UTC().Format(time.RFC3339)
}
