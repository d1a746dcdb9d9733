package teams

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// cardSchema is the Adaptive Cards 1.5 schema, pinned in testdata (see
// testdata/SOURCES).
func cardSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "adaptive-card-1.5.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("adaptive-card.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("adaptive-card.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkCard validates a rendered card against the schema. "msteams" is
// Teams' documented extension at the card's root (full width, mention
// entities), which the generic schema does not list: it is checked on its
// own and left out of the schema's check.
func checkCard(t *testing.T, s *jsonschema.Schema, card AdaptiveCard) []byte {
	t.Helper()
	out, err := json.MarshalIndent(card, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if n := Size(card); n > MaxCardBytes {
		t.Errorf("card is %d bytes, over %d", n, MaxCardBytes)
	}
	for k := range card.MSTeams {
		if k != "width" && k != "entities" {
			t.Errorf("msteams.%s is not a documented Teams card property", k)
		}
	}
	bare := card
	bare.MSTeams = nil
	raw, _ := json.Marshal(bare)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("the card fails the Adaptive Cards 1.5 schema: %v\n%s", err, out)
	}
	return append(out, '\n')
}

// TestCardFixtures renders the shared fixtures into golden files beside
// the other platforms', each checked against the pinned schema: cards
// as in a channel, whose threads take replies.
func TestCardFixtures(t *testing.T) {
	s := cardSchema(t)
	for _, f := range adaptertest.CardFixtures() {
		t.Run(f.Name, func(t *testing.T) {
			card := Card(f.Card, true)
			if f.Card.As == core.DeliverRemind {
				card = Reminder(f.Card)
			}
			adaptertest.Golden(t, *update, core.SurfaceTeams, f.Name, checkCard(t, s, card))
		})
	}
}

// TestSchemaCatchesAWrongCard: the schema check is not a formality.
func TestSchemaCatchesAWrongCard(t *testing.T) {
	s := cardSchema(t)
	bad := newCard([]Element{{"type": "TextBlock", "txt": "misspelt"}})
	raw, _ := json.Marshal(AdaptiveCard{Type: bad.Type, Schema: bad.Schema, Version: bad.Version, Body: bad.Body})
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if s.Validate(v) == nil {
		t.Fatal("a TextBlock without text passed the schema")
	}
}

// TestPeoplesTextIsPlain: a question's Markdown is not rendered: it goes
// into TextRuns, never into a TextBlock's text.
func TestPeoplesTextIsPlain(t *testing.T) {
	for _, f := range adaptertest.CardFixtures() {
		if f.Card.As == core.DeliverRemind {
			continue
		}
		c := f.Card
		c.Text = "[click](https://evil.example) **now**"
		// The agent's name and labels are its words too.
		c.Meta.Agent = "[Approve here](https://evil.example/agent)"
		c.Meta.Labels.Project = "**Approved by Alice**"
		raw, _ := json.Marshal(Card(c, true))
		var card struct{ Body []map[string]any }
		if err := json.Unmarshal(raw, &card); err != nil {
			t.Fatal(err)
		}
		for _, e := range card.Body {
			if txt, _ := e["text"].(string); e["type"] == "TextBlock" && (strings.Contains(txt, "evil.example") || strings.Contains(txt, "Approved by Alice")) {
				t.Fatalf("%s: the question's text is in a TextBlock, which renders Markdown", f.Name)
			}
		}
		if !strings.Contains(string(raw), `"text":"[click](https://evil.example) **now**"`) {
			t.Fatalf("%s: the question's text is not shown as written:\n%s", f.Name, raw)
		}
	}
}

// TestActionsCarryRefAndInput: every action is an Action.Execute with an
// Action.Submit fallback carrying the same data, and an action that takes
// text names an input that exists on the card, prefilled for an edit.
func TestActionsCarryRefAndInput(t *testing.T) {
	checked := 0
	for _, f := range adaptertest.CardFixtures() {
		if f.Card.As == core.DeliverRemind {
			continue
		}
		raw, _ := json.Marshal(Card(f.Card, true))
		var card struct{ Body []map[string]any }
		_ = json.Unmarshal(raw, &card)
		inputs := map[string]map[string]any{}
		for _, e := range card.Body {
			if e["type"] == "Input.Text" {
				inputs[e["id"].(string)] = e
			}
		}
		for _, e := range card.Body {
			if e["type"] != "ActionSet" {
				continue
			}
			for _, x := range e["actions"].([]any) {
				act := x.(map[string]any)
				fb, _ := act["fallback"].(map[string]any)
				if act["type"] != "Action.Execute" || act["verb"] != Verb || fb["type"] != "Action.Submit" {
					t.Fatalf("%s: %v is not an Execute with a Submit fallback", f.Name, act)
				}
				data := act["data"].(map[string]any)
				if _, err := core.DecodeRef(data[DataRef].(string)); err != nil {
					t.Fatalf("%s: %v carries no ref", f.Name, act)
				}
				if in, ok := data[DataInput].(string); ok {
					if inputs[in] == nil {
						t.Fatalf("%s: %v names input %q, which the card lacks", f.Name, act, in)
					}
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no fixture has an action that takes text")
	}
}

// TestCardWorstCaseFits fills every field to core's maximum, with
// characters that grow in JSON, and checks that every card stays within
// MaxCardBytes and the schema, and that only a card that needs it loses
// its fallbacks.
func TestCardWorstCaseFits(t *testing.T) {
	s := cardSchema(t)
	long := func(n int) string { return repeatRunes("\"<😀>é\\", n) }
	ids := func(i int) string { return strings.Repeat("x", core.MaxIDLen-3) + string(rune('a'+i)) + "zz" }
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	mk := func(kind core.Kind) *core.Question {
		return &core.Question{ID: "b234567abcdefghij", Kind: kind, Agent: core.AgentID(long(core.MaxIDLen)), RunID: core.RunID(long(core.MaxIDLen)),
			Labels: core.Labels{Project: long(core.MaxIDLen), Task: long(core.MaxIDLen)}, Text: long(core.MaxTextLen),
			Context: long(core.MaxContextLen), Reversibility: core.HardToReverse, Route: "ops", CreatedAt: t0,
			Deadline: t0.Add(time.Hour), State: core.StateOpen}
	}
	dec, form, appr, batch := mk(core.KindDecision), mk(core.KindForm), mk(core.KindApproval), mk(core.KindApproval)
	for i := range core.MaxOptions {
		dec.Options = append(dec.Options, core.Option{ID: ids(i), Title: long(core.MaxTitleLen), Writeup: long(core.MaxWriteupLen), Recommended: i == 0})
	}
	for i := range core.MaxItems {
		it := core.FormItem{ID: ids(i), Question: long(core.MaxTextLen)}
		for j := range core.MaxItemOptions {
			it.Options = append(it.Options, core.FormOption{ID: ids(j), Label: long(core.MaxTitleLen), Description: long(core.MaxWriteupLen)})
		}
		form.Items = append(form.Items, it)
	}
	args, _ := json.Marshal(map[string]string{"k": long(core.MaxArgumentsLen / 8)})
	appr.Call = &core.ToolCall{Tool: long(core.MaxToolLen), Arguments: args, ArgumentsSHA256: strings.Repeat("a", 64), Editable: &core.Editable{All: true}}
	for i := range core.MaxBatchCalls {
		batch.Calls = append(batch.Calls, core.BatchCall{ToolCallID: ids(i % 20), ToolCall: core.ToolCall{Tool: long(core.MaxToolLen), Arguments: args,
			ArgumentsSHA256: strings.Repeat("b", 64), Editable: &core.Editable{All: true}}})
	}
	for name, q := range map[string]*core.Question{"decision": dec, "form": form, "approval": appr, "batch": batch} {
		t.Run(name, func(t *testing.T) {
			card := Card(card.New(q, core.MessageRef{Surface: core.SurfaceTeams, Room: "r", Kind: core.DeliverPost}), true)
			if n := Size(card); n > MaxCardBytes {
				t.Fatalf("%d bytes, over %d", n, MaxCardBytes)
			}
			raw := string(checkCard(t, s, card))
			if !strings.Contains(raw, "Action.Execute") {
				t.Fatal("the card lost its actions")
			}
			// Only the batch of twenty editable calls is too long to
			// edit in the card, and says so.
			if cut := strings.Contains(raw, TooLongToEdit); cut != (name == "batch") {
				t.Fatalf("edits dropped: %v", cut)
			}
			if name == "approval" && !strings.Contains(raw, `"label": "Arguments (JSON)`) {
				t.Fatal("a single approval's edit input is gone")
			}
		})
	}
}

func repeatRunes(unit string, n int) string {
	rs := []rune(unit)
	out := make([]rune, n)
	for i := range out {
		out[i] = rs[i%len(rs)]
	}
	return string(out)
}

// TestRecommendedIsSaidOnce: a recommended option's button says
// "(Recommended)" once, as on every other platform. Before, Teams cut
// the whole label and then added the kept suffix again: "1. PostgreSQL
// (Recommended) (Recommended)".
func TestRecommendedIsSaidOnce(t *testing.T) {
	seen := 0
	for _, f := range adaptertest.CardFixtures() {
		raw, err := json.Marshal(Card(f.Card, true))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(raw), "(Recommended) (Recommended)"); n > 0 {
			t.Errorf("%s: a button says (Recommended) twice", f.Name)
		}
		seen += strings.Count(string(raw), "(Recommended)")
	}
	if seen == 0 {
		t.Fatal("no fixture has a recommended option")
	}
}

// TestDigestSaysItsCountsAreFloors: a digest whose lists core stopped at
// its cap says "N or more" and that more may be left out; before, it gave
// the floor as the count.
func TestDigestSaysItsCountsAreFloors(t *testing.T) {
	b, err := json.Marshal(Digest(adaptertest.CappedDigest()))
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.CheckCappedDigest(t, string(b))
}
