package teams

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// FuzzActionData: whatever a card action sends back, reading it never
// panics, a ref is found only where the data names one, and the text is
// the named input's alone.
func FuzzActionData(f *testing.F) {
	ref := core.Ref{QuestionID: "b234567abcdefghij", Item: -1, Action: core.RefDeny}.Encode()
	f.Add(`{"askbridgeRef":"` + ref + `","askbridgeInput":"askbridgeText0","askbridgeText0":"not today","askbridgeText1":"{}"}`)
	f.Add(`{"askbridgeRef":"` + ref + `"}`)
	f.Add(`{"askbridgeRef":7,"askbridgeInput":["x"]}`)
	f.Add(`"just a string"`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, raw string) {
		r, text, ok := actionData(json.RawMessage(raw))
		var m map[string]any
		if json.Unmarshal([]byte(raw), &m) != nil {
			if ok {
				t.Fatalf("%q is not an object, yet read as ref %q", raw, r)
			}
			return
		}
		if want, _ := m[DataRef].(string); ok != (want != "") || r != want {
			t.Fatalf("%q: ref %q ok %v", raw, r, ok)
		}
		in, _ := m[DataInput].(string)
		if want, _ := m[in].(string); in != "" && text != want || in == "" && text != "" {
			t.Fatalf("%q: text %q", raw, text)
		}
	})
}
