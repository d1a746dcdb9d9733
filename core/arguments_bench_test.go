package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// BenchmarkHashArguments: the digest every approval's arguments get at
// the ask, for a typical call and for one near the 16 KiB limit.
func BenchmarkHashArguments(b *testing.B) {
	for name, args := range map[string]json.RawMessage{
		"small": json.RawMessage(`{"command":"git push origin main","description":"Push the release branch","timeout":120000}`),
		"16KiB": json.RawMessage(`{"file_path":"/src/main.go","content":"` + strings.Repeat("package main; ", 1150) + `"}`),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(args)))
			for b.Loop() {
				if _, _, err := core.HashArguments(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
