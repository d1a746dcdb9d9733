package core_test

import (
	"slices"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestSurfaceLists: the answer surfaces follow the one list of chat
// platforms, and messages name them from it.
func TestSurfaceLists(t *testing.T) {
	if !slices.Equal(core.AnswerSurfaces[:len(core.ChatSurfaces)], core.ChatSurfaces) {
		t.Fatalf("answer surfaces %v do not start with the chat surfaces %v", core.AnswerSurfaces, core.ChatSurfaces)
	}
	for _, s := range core.AnswerSurfaces {
		if got, err := core.ParseSurface(string(s)); err != nil || got != s {
			t.Errorf("ParseSurface(%q) = %q, %v", s, got, err)
		}
		if s.IsChat() != slices.Contains(core.ChatSurfaces, s) {
			t.Errorf("%s.IsChat() = %v", s, s.IsChat())
		}
	}
	for _, bad := range []string{"", "system", "agent", "Slack", "irc"} {
		if _, err := core.ParseSurface(bad); err == nil || core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("ParseSurface(%q) = %v", bad, err)
		}
	}
	if got := core.SurfaceNames(core.ChatSurfaces); got != "slack, discord, telegram, teams, email or ntfy" {
		t.Errorf("SurfaceNames = %q", got)
	}
	if got := core.SurfaceNames(core.ChatSurfaces[:1]); got != "slack" {
		t.Errorf("SurfaceNames of one = %q", got)
	}
}
