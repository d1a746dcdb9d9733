package redis

import (
	"regexp"
	"strings"
	"testing"
)

// Every top-level definition of common.lua is one of commonDefs, whole.
func TestCommonDefsSplitCommonLua(t *testing.T) {
	common, err := luaFiles.ReadFile("lua/common.lua")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for line := range strings.Lines(string(common)) {
		if strings.HasPrefix(line, "local") {
			want = append(want, line)
		}
	}
	if len(commonDefs) != len(want) || len(want) < 10 {
		t.Fatalf("%d definitions for %d top-level locals", len(commonDefs), len(want))
	}
	for i, d := range commonDefs {
		if !strings.HasPrefix(d.text, want[i]) {
			t.Errorf("definition %d (%s) starts %q, want %q", i, d.name, d.text, want[i])
		}
		if !strings.Contains(string(common), d.text) {
			t.Errorf("definition %s is not common.lua's text", d.name)
		}
	}
	// A function's whole body is in its definition.
	for _, d := range commonDefs {
		if strings.HasPrefix(d.text, "local function") && !strings.HasSuffix(strings.TrimSpace(d.text), "\nend") {
			t.Errorf("function %s is cut short: %q", d.name, d.text)
		}
	}
}

// Each script defines every helper of common.lua it uses, and no other.
func TestScriptsGetTheHelpersTheyUse(t *testing.T) {
	names := map[string]bool{}
	for _, d := range commonDefs {
		names[d.name] = true
	}
	ident := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	for _, sc := range []script{createScript, resolveScript, renotifyScript, recordMessageScript, endRunScript,
		appendScript, purgeScript, claimScript, leaseScript, releaseScript, beatScript, retryScript, ackScript, extendScript,
		leaveScript, cancelScript, laterScript, readScript, closedCatchUpScript, migrateScript, migrateShardScript,
		setValueIfScript, refundScript} {
		src := sc.eval[1].(string)
		defined := map[string]bool{}
		for _, d := range splitDefs(src) {
			defined[d.name] = true
		}
		// How often each name is used: every occurrence but a definition's.
		uses := map[string]int{}
		for _, n := range ident.FindAllString(src, -1) {
			uses[n]++
		}
		for n := range names {
			if defined[n] {
				uses[n]--
			}
			switch {
			case uses[n] > 0 && !defined[n]:
				t.Errorf("%s uses %s but does not define it", sc.name, n)
			case uses[n] == 0 && defined[n]:
				t.Errorf("%s defines %s and does not use it", sc.name, n)
			}
		}
	}
	// A script that appends no event still returns through with_head.
	if src := readScript.eval[1].(string); !strings.Contains(src, "local function with_head") || strings.Contains(src, "local function append_event") {
		t.Errorf("read.lua's helpers: %s", src[:min(len(src), 400)])
	}
}
