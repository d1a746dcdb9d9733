package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// The answer forms' fields, the same for every kind: text is a
// clarification's answer, a decision's note or an approval's reason;
// option is a decision's option or approve/deny. A form's items post as
// item_option.ID and item_text.ID, every item in one submit, or only the
// one a button named item picks (which may also post plain item_option
// and item_text). confirm is the second submit a hard-to-reverse choice
// needs (confirm.go).
const (
	fieldText       = "text"
	fieldOption     = "option"
	fieldItem       = "item"
	fieldItemOption = "item_option"
	fieldItemText   = "item_text"
	fieldReason     = "reason"
	fieldConfirm    = "confirm"
)

// answer records an answer of any kind through core, exactly as given. A
// choice on a hard-to-reverse question is first shown back to the person
// to confirm, unless this post is that confirmation.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, sess *session) {
	if !sess.account.Role.MayAnswer() {
		s.forbidden(w, r, "An observer token may look but not answer. Nothing was recorded.")
		return
	}
	in := core.AnswerInput{
		QuestionID: questionID(r),
		Decider:    decider(sess.account),
		Text:       r.PostFormValue(fieldText),
		OptionID:   r.PostFormValue(fieldOption),
		Items:      itemsInput(r),
	}
	if err := approvalInput(r, &in); err != nil {
		s.outcome(w, r, sess, in.QuestionID, core.Outcome{}, err)
		return
	}
	if r.PostFormValue(fieldConfirm) != "yes" {
		q, err := s.svc.Get(r.Context(), in.QuestionID)
		if err != nil {
			s.outcome(w, r, sess, in.QuestionID, core.Outcome{}, err)
			return
		}
		// Only a choice core would record is shown back to confirm:
		// one it will refuse (a second vote, someone the route does not
		// list, a closed question) goes to core at once, which refuses
		// it and records the refusal, as on every other door.
		if q.Open() && card.NeedsConfirm(q, in) && s.svc.MayAnswer(q, in.Decider) && s.votedOf(q, sess.account) == nil {
			s.confirm(w, r, sess, q, in)
			return
		}
	}
	o, err := s.svc.Answer(r.Context(), in)
	s.outcome(w, r, sess, in.QuestionID, o, err)
}

// itemsInput reads a form's items: the one a button named item picks,
// else every item given a choice or a text, in the order of their ids.
func itemsInput(r *http.Request) []core.ItemInput {
	_ = r.ParseForm() // PostFormValue above has parsed it already; a parse error leaves it empty
	pick := func(id string) core.ItemInput {
		in := core.ItemInput{ItemID: id, OptionID: r.PostForm.Get(fieldItemOption + "." + id), Text: r.PostForm.Get(fieldItemText + "." + id)}
		if in.OptionID == "" && in.Text == "" {
			in.OptionID, in.Text = r.PostForm.Get(fieldItemOption), r.PostForm.Get(fieldItemText)
		}
		return in
	}
	if item := r.PostForm.Get(fieldItem); item != "" {
		return []core.ItemInput{pick(item)}
	}
	var ids []string
	for k, v := range r.PostForm {
		id, ok := strings.CutPrefix(k, fieldItemOption+".")
		if !ok {
			id, ok = strings.CutPrefix(k, fieldItemText+".")
		}
		if ok && strings.TrimSpace(strings.Join(v, "")) != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var out []core.ItemInput
	for _, id := range ids {
		out = append(out, pick(id))
	}
	return out
}

// decline takes nothing but the click: the agent resumes with a fixed
// server-owned text, as on every other door.
func (s *Server) decline(w http.ResponseWriter, r *http.Request, sess *session) {
	if !sess.account.Role.MayAnswer() {
		s.forbidden(w, r, "An observer token may look but not decline. Nothing was recorded.")
		return
	}
	id := questionID(r)
	o, err := s.svc.Decline(r.Context(), id, decider(sess.account))
	s.outcome(w, r, sess, id, o, err)
}

// cancel withdraws a question: an operator or an admin may
// (access.Role.MayWithdraw, as on the API).
func (s *Server) cancel(w http.ResponseWriter, r *http.Request, sess *session) {
	if !sess.account.Role.MayWithdraw() {
		s.forbidden(w, r, "Only an operator or admin token may withdraw a question. Nothing was recorded.")
		return
	}
	id := questionID(r)
	o, err := s.svc.Cancel(r.Context(), core.CancelInput{QuestionID: id, By: decider(sess.account), Reason: r.PostFormValue(fieldReason)})
	s.outcome(w, r, sess, id, o, err)
}

// recorded is what a result page lists: exactly what the store now holds
// of this answer, a line at a time. Value is stored text, a person's or
// an agent's; By and At, for a part of a form or a batch, say who
// decided it and when. The page draws them apart, each person's words
// isolated (<bdi>), so no text of theirs can reorder the server's
// "(by ... at ...)" after it.
type recorded struct {
	Label, Value string
	By, At       string
	// Line, when set, is drawn in Value's place: the server's words
	// that name people (who closed it, a vote's tally), each name
	// isolated.
	Line line
}

// questionID is the question the request's path names, as sent: core
// answers a malformed id exactly like an unknown one.
func questionID(r *http.Request) core.QuestionID { return core.QuestionID(r.PathValue("id")) }

// outcome renders the result of an attempt: what was recorded, or the
// truth about why nothing was; on the result page, or on the inbox row
// the answer was given from.
func (s *Server) outcome(w http.ResponseWriter, r *http.Request, sess *session, id core.QuestionID, o core.Outcome, err error) {
	v := sess.viewer()
	st := &step{}
	title := "Not recorded"
	status := http.StatusOK
	var q *core.Question
	var closed *core.ClosedError
	switch {
	case err == nil:
		q, title = o.Question, "Recorded"
		st.Recorded = recordedOf(q)
		if o.Standing != nil {
			st.Granted = append(st.Granted, grantedLine(*o.Standing))
		}
		for _, g := range o.Standings {
			st.Granted = append(st.Granted, grantedLine(g))
		}
	case errors.As(err, &closed):
		status, q = http.StatusConflict, closed.Question
		st.Problem = namedLine(card.RefusalNote(err), namesOf(q))
	case core.ErrorCode(err) == core.CodeNotFound:
		s.notFound(w, r)
		return
	case core.ErrorCode(err) == core.CodeForbidden:
		status = http.StatusForbidden
		st.Problem = line{{Text: card.RefusalNote(err)}}
	case core.ErrorCode(err) == core.CodeInvalid, core.ErrorCode(err) == core.CodeConflict:
		status = http.StatusBadRequest
		if core.ErrorCode(err) == core.CodeConflict {
			status = http.StatusConflict
		}
		// Core's message may end a sentence of its own (a second vote's
		// does): one full stop, then ours.
		st.Problem = line{{Text: strings.TrimRight(core.ErrorMessage(err), ". ") + ". Nothing was recorded."}}
	default:
		s.internal(w, r, err)
		return
	}
	code := core.ErrorCode(err)
	if q == nil {
		if q, err = s.svc.Get(r.Context(), id); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	if closed == nil && code == core.CodeConflict {
		if note := partDoneNote(q, r); note != "" {
			st.Problem = namedLine(note, namesOf(q))
		}
	}
	if inPlace(r) {
		s.renderRow(w, r, status, q, v, st)
		return
	}
	s.render(w, r, status, "result", s.page(sess, map[string]any{
		"Title": title, "Recorded": st.Recorded, "Granted": st.Granted, "Problem": st.Problem, "Card": s.cardOf(q, v),
	}))
}

// partDoneNote is, for an answer refused because a part it named (a
// form's item, a batch's call) was answered first, who answered that part
// and when, in every surface's words (card.PartDoneNote, with the part's
// number as the card shows it); "" when no part it named is answered.
// Core's own message names the part by its id and may leave out who.
func partDoneNote(q *core.Question, r *http.Request) string {
	in := core.AnswerInput{Items: itemsInput(r)}
	_ = approvalInput(r, &in) // a refusal here was core's, after these parsed
	for _, it := range in.Items {
		if i := slices.IndexFunc(q.Items, func(fi core.FormItem) bool { return fi.ID == it.ItemID }); i >= 0 {
			if note, done := card.PartDoneNote(q, core.Ref{QuestionID: q.ID, Item: i}); done {
				return note
			}
		}
	}
	for _, c := range in.Calls {
		if i := slices.IndexFunc(q.Calls, func(bc core.BatchCall) bool { return bc.ToolCallID == c.ToolCallID }); i >= 0 {
			if note, done := card.PartDoneNote(q, core.Ref{QuestionID: q.ID, Item: i}); done {
				return note
			}
		}
	}
	return ""
}

// recordedOf lists what the question holds of the viewer's act: the
// resolution once closed, else the form items answered so far, or on a
// question that needs several people the vote and the tally so far.
func recordedOf(q *core.Question) []recorded {
	var out []recorded
	add := func(label, value string) {
		if value != "" {
			out = append(out, recorded{Label: label, Value: value})
		}
	}
	part := func(label, value, by string, at time.Time) {
		out = append(out, recorded{Label: label, Value: value, By: by, At: at.UTC().Format(timeFormat)})
	}
	add("State", string(q.State))
	if q.Open() && q.Quorum > 1 {
		// Left open after it counted, an act on a question with a quorum
		// was a vote: said as chat says it, with the tally so far. The
		// kinds that take votes have no parts, so the note reads nothing
		// of the ref but the question it names.
		out = append(out, recorded{Label: "Your vote", Line: namedLine(card.RecordedNote(q, core.Ref{QuestionID: q.ID, Item: -1}), namesOf(q))})
	}
	if res := q.Resolution; res != nil {
		// Who closed it in core's one wording: a person by name, anything
		// else (a quorum, parts, a standing approval) as OutcomeLine says.
		if d, ok := card.ClosingPerson(q); ok {
			out = append(out, recorded{Label: "By", Line: line{{Text: card.PersonName(d), Name: true}, {Text: " via " + string(d.Surface)}}})
		} else if l := card.OutcomeLine(q); l != "" {
			out = append(out, recorded{Label: "Closed", Line: namedLine(l, namesOf(q))})
		}
		add("At", res.At.UTC().Format(timeFormat))
		switch q.Kind {
		case core.KindDecision:
			if o, ok := q.Option(res.OptionID); ok && q.State == core.StateAnswered {
				add("Option", o.Title)
			}
			add("Write-up sent to the agent", res.Answer)
			add("Note", res.Reason)
		case core.KindApproval:
			if res.Approved != nil {
				add("Verdict", map[bool]string{true: "approved", false: "denied"}[*res.Approved])
			}
			add("Reason", res.Reason)
			add("Arguments SHA-256", res.ArgumentsSHA256)
			if e := res.Edit; e != nil {
				add("Changes", core.ChangesLine(e))
				add("Approved arguments", core.PrettyJSON(e.Arguments))
				add("Asked arguments SHA-256", e.AskedArgumentsSHA256)
			}
			if u := res.Standing; u != nil {
				add("Standing approval", u.ID+" by "+card.PersonName(u.GrantedBy))
			}
		default:
			add("Answer", res.Answer)
			add("Reason", res.Reason)
		}
	}
	if q.IsBatch() {
		// Each decided call in core's own words, as on every card.
		for _, sec := range card.New(q, core.MessageRef{Surface: core.SurfaceConsole}).Sections {
			if sec.Kind != card.SectionCall || sec.Answer == nil || sec.Index >= len(q.Calls) {
				continue
			}
			id := q.Calls[sec.Index].ToolCallID
			val := sec.Answer.Text
			if a, _ := q.Answered(id); a.Text != "" {
				val += ": " + a.Text
			}
			part(fmt.Sprintf("%d. %s (%s)", sec.Index+1, sec.Title, id), val, sec.Answer.By, sec.Answer.At)
		}
	}
	if q.Kind == core.KindForm {
		for _, a := range q.Answers {
			it, _ := q.Item(a.ItemID)
			val := it.Shown(a.OptionID, a.Text)
			part(it.Question, val, card.PartBy(a), a.At)
		}
	}
	return out
}
