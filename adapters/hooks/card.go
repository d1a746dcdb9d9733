package hooks

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
)

// What a prompt's card says besides the call itself: its text and its
// context, built from what the host sent. Much of that is the model's
// own doing (the tool input's description is its words; the working
// directory is where its commands took the session), so each thing is
// one line of its own, opened with what it is: a line break in it makes
// no second line that reads as another thing.

func (p Prompt) text() string {
	if p.Host == Codex && p.Tool == NetworkAccessTool {
		return fmt.Sprintf("%s asks permission for network access.", p.Host.title())
	}
	if p.Event == PreToolUse {
		return fmt.Sprintf("%s is about to use %s. Allow it?", p.Host.title(), p.Tool)
	}
	return fmt.Sprintf("%s asks permission to use %s.", p.Host.title(), p.Tool)
}

// maxSubagentShown caps each of the subagent's type and id on the card.
const maxSubagentShown = 64

// context carries the working directory, the subagent that asked (where
// a subagent did), and the tool input's own description (Claude Code's
// Bash sends one; Codex sends the request's justification), one line
// each, capped to what a question takes.
func (p Prompt) context() string {
	var parts []string
	if p.Cwd != "" {
		parts = append(parts, "Working directory: "+oneLine(p.Cwd))
	}
	if p.SubagentID != "" {
		kind := oneLine(p.SubagentType)
		if kind == "" {
			kind = "unnamed"
		}
		parts = append(parts, fmt.Sprintf("Subagent: %s (%s)", truncate(kind, maxSubagentShown), truncate(oneLine(p.SubagentID), maxSubagentShown)))
	}
	var in struct {
		Description string `json:"description"`
	}
	if json.Unmarshal(p.Input, &in) == nil {
		if d := oneLine(in.Description); d != "" {
			parts = append(parts, "The agent's description of the call: "+d)
		}
	}
	return truncate(strings.Join(parts, "\n"), core.MaxContextLen)
}

// oneLine is s as one line: every run of line breaks (of any kind a
// renderer may break at) one space, without the characters core refuses
// in an agent's text (core.IsTextControl) but tab, and trimmed. A stray
// control in the host's text is no reason to refuse the prompt (a
// refused PreToolUse is asked at the keyboard, or denied on Codex).
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case lineBreak(r):
			return '\n'
		case core.IsTextControl(r) && r != '\t':
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(strings.Join(strings.FieldsFunc(s, lineBreak), " "))
}

// lineBreak reports whether r ends a line where text is shown.
func lineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// project is the last element of the working directory, as a label.
func project(cwd string) string {
	clean := strings.Map(func(r rune) rune {
		if core.IsTextControl(r) || lineBreak(r) {
			return -1 // a label is one line
		}
		return r
	}, cwd)
	if strings.TrimSpace(clean) == "" {
		return ""
	}
	base := path.Base(strings.ReplaceAll(clean, `\`, "/"))
	if base == "/" || base == "." {
		return ""
	}
	return truncate(base, core.MaxIDLen)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
