package audit_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
)

// BenchmarkLines reads an export of 10,000 events as `askbridge audit
// verify FILE` does before it checks the chain: the cost per line of
// decoding it and checking that it says no more than its event.
func BenchmarkLines(b *testing.B) {
	var buf bytes.Buffer
	at := time.Unix(1_700_000_000, 0).UTC()
	for i := range 10_000 {
		e := core.Event{Seq: int64(i + 1), QuestionID: "aaaaaaaaaaaaaaaaa", Kind: core.EventAnswered, At: at,
			Actor: "p-0123456789abcdef", Reason: "approved: the deploy window is open",
			Chain: &core.Chain{Prev: "0123456789abcdef0123456789abcdef", Hash: "fedcba9876543210fedcba9876543210", Digest: "00112233445566778899aabbccddeeff"}}
		line, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		buf.Write(append(line, '\n'))
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := audit.Lines(bytes.NewReader(buf.Bytes()), func(core.Event) error { n++; return nil }); err != nil || n != 10_000 {
			b.Fatalf("%d events, %v", n, err)
		}
	}
}
