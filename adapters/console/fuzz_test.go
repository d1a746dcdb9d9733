package console

import (
	"strings"
	"testing"
)

// FuzzLocalPath: whatever a sign-in form says, the way back stays on this
// site.
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/", "/q/abc", "//evil.example", "/\\evil", "https://evil.example", "", "/q/x?kind=form", "/\r\nSet-Cookie: x", "/\t/evil.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got := localPath(p)
		// Browsers drop tabs and newlines from a URL before reading it.
		seen := strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(got)
		if !strings.HasPrefix(seen, "/") || strings.HasPrefix(seen, "//") || strings.ContainsAny(got, "\\\x00\x7f") {
			t.Fatalf("localPath(%q) = %q leaves the site", p, got)
		}
		if got != "/" && got != p {
			t.Fatalf("localPath(%q) = %q changed a local path", p, got)
		}
	})
}
