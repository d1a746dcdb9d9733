package slackfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// View is a modal the bot opened with views.open, for the user whose
// click carried the trigger.
type View struct {
	ID      string
	User    string
	Trigger string
	// Raw is the view as the bot sent it.
	Raw map[string]any
}

// CallbackID is the view's callback_id.
func (v View) CallbackID() string { s, _ := v.Raw["callback_id"].(string); return s }

// PrivateMetadata is the view's private_metadata.
func (v View) PrivateMetadata() string { s, _ := v.Raw["private_metadata"].(string); return s }

// Inputs lists the view's input blocks as block id → action id, with the
// initial value each starts with.
func (v View) Inputs() []Input {
	blocks, _ := v.Raw["blocks"].([]any)
	var out []Input
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		if m["type"] != "input" {
			continue
		}
		el, _ := m["element"].(map[string]any)
		in := Input{}
		in.BlockID, _ = m["block_id"].(string)
		in.ActionID, _ = el["action_id"].(string)
		in.Initial, _ = el["initial_value"].(string)
		if n, ok := el["max_length"].(float64); ok {
			in.MaxLength = int(n)
		}
		out = append(out, in)
	}
	return out
}

// Input is one input block of a view.
type Input struct {
	BlockID, ActionID, Initial string
	MaxLength                  int
}

// trigger issues a fresh trigger id for a click; views.open takes each
// once, as Slack does.
func (f *Fake) trigger(user string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	id := fmt.Sprintf("%d.%d.trigger", f.base, f.seq)
	if f.triggers == nil {
		f.triggers = map[string]string{}
	}
	f.triggers[id] = user
	return id
}

// viewsOpen is views.open: a JSON body with the trigger and the view.
func (f *Fake) viewsOpen(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	body, _ := io.ReadAll(r.Body)
	var req struct {
		TriggerID string         `json:"trigger_id"`
		View      map[string]any `json:"view"`
	}
	f.mu.Lock()
	f.calls["views.open"]++
	f.mu.Unlock()
	switch {
	case !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "):
		_ = json.NewEncoder(w).Encode(apiError{Error: "not_authed"})
		return
	case json.Unmarshal(body, &req) != nil || req.View == nil:
		_ = json.NewEncoder(w).Encode(apiError{Error: "invalid_arguments"})
		return
	}
	f.mu.Lock()
	user, ok := f.triggers[req.TriggerID]
	delete(f.triggers, req.TriggerID)
	var v View
	if ok {
		f.seq++
		v = View{ID: fmt.Sprintf("V%06d", f.seq), User: user, Trigger: req.TriggerID, Raw: req.View}
		f.views = append(f.views, v)
	}
	f.mu.Unlock()
	if !ok {
		_ = json.NewEncoder(w).Encode(apiError{Error: "invalid_trigger_id"})
		return
	}
	f.notify()
	out := map[string]any{"ok": true, "view": map[string]any{"id": v.ID, "type": "modal", "callback_id": v.CallbackID()}}
	_ = json.NewEncoder(w).Encode(out)
}

// Views are the modals opened so far, in order.
func (f *Fake) Views() []View {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]View(nil), f.views...)
}

// SubmitPayload is the view_submission payload Slack sends when user u
// submits view v with the given values (block id → text), built from the
// fixture.
func SubmitPayload(u User, v View, values map[string]string) []byte {
	var p map[string]any
	if err := json.Unmarshal(fixture("slack-view-submission.json"), &p); err != nil {
		panic(err)
	}
	p["user"] = map[string]any{"id": u.ID, "username": strings.ToLower(u.Name), "name": strings.ToLower(u.Name), "team_id": u.payloadTeam()}
	view := p["view"].(map[string]any)
	view["id"], view["callback_id"], view["private_metadata"] = v.ID, v.CallbackID(), v.PrivateMetadata()
	view["blocks"] = v.Raw["blocks"]
	state := map[string]any{}
	for _, in := range v.Inputs() {
		if text, ok := values[in.BlockID]; ok {
			state[in.BlockID] = map[string]any{in.ActionID: map[string]any{"type": "plain_text_input", "value": text}}
		}
	}
	view["state"] = map[string]any{"values": state}
	out, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return out
}
