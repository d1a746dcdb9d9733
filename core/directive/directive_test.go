package directive

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestMatrixIsTotal(t *testing.T) {
	if err := checkMatrix(buildMatrix()); err != nil {
		t.Fatalf("the shipped matrix is not total: %v", err)
	}
	for _, a := range Autonomies {
		for _, tier := range Tiers {
			if _, err := Text(a, tier, "", "", nil); err != nil {
				t.Errorf("Text(%s, %s): %v", a, tier, err)
			}
		}
	}
}

func TestCheckMatrixFindsHoles(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(matrix)
		want string
	}{
		{"missing cell", func(m matrix) { delete(m[AutonomySemi], TierSummary) }, `autonomy "semi" at tier "summary"`},
		{"empty cell", func(m matrix) { m[AutonomyLocked][TierMinimal] = " \n" }, `autonomy "locked" at tier "minimal"`},
		{"missing row", func(m matrix) { delete(m, AutonomySupervised) }, `autonomy "supervised" at tier "full"`},
		{"unknown row", func(m matrix) { m["reckless"] = map[Tier]string{TierFull: "x"} }, `unknown autonomy "reckless"`},
		{"unknown column", func(m matrix) { m[AutonomyFull]["verbose"] = "x" }, `unknown tier "verbose"`},
	} {
		m := buildMatrix()
		tc.edit(m)
		err := checkMatrix(m)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: checkMatrix = %v, want an error containing %s", tc.name, err, tc.want)
		}
	}
}

func TestMustMatrixPanicsOnAHole(t *testing.T) {
	m := buildMatrix()
	delete(m[AutonomyFull], TierMinimal)
	defer func() {
		if recover() == nil {
			t.Error("mustMatrix accepted an incomplete matrix")
		}
	}()
	mustMatrix(m)
}

func TestEveryCellSaysTheSameThing(t *testing.T) {
	for _, a := range Autonomies {
		for _, tier := range Tiers {
			text := standing[a][tier]
			for _, must := range []string{
				"rather than guess",
				"material", "cost", "scope", "public behaviour", "data", "someone else's work",
				"reverse", "real rework, not a quick edit",
			} {
				if !strings.Contains(text, must) {
					t.Errorf("%s/%s lacks %q:\n%s", a, tier, must, text)
				}
			}
		}
	}
}

func TestEachLevelHasItsOwnWording(t *testing.T) {
	want := map[Autonomy][]string{
		AutonomyFull:       {"no licence to guess at an irreversible choice"},
		AutonomySemi:       {"outine, easily reversible calls are yours"},
		AutonomySupervised: {"plan", "the moment it appears"},
		AutonomyLocked:     {"with its alternatives", "while it is still open"},
	}
	for a, phrases := range want {
		for _, tier := range Tiers {
			for _, p := range phrases {
				if !strings.Contains(standing[a][tier], p) {
					t.Errorf("%s/%s lacks %q", a, tier, p)
				}
			}
			for b, others := range want {
				if b == a {
					continue
				}
				for _, p := range others {
					if p != "plan" && strings.Contains(standing[a][tier], p) {
						t.Errorf("%s/%s borrows %s's wording %q", a, tier, b, p)
					}
				}
			}
		}
	}
}

func TestTiersShrink(t *testing.T) {
	for _, a := range Autonomies {
		full, summary, minimal := len(standing[a][TierFull]), len(standing[a][TierSummary]), len(standing[a][TierMinimal])
		if !(full > summary && summary > minimal) {
			t.Errorf("%s: tier lengths full %d, summary %d, minimal %d do not shrink", a, full, summary, minimal)
		}
	}
}

// A model taught a tool's name calls it even after an operator has switched
// it off, so no cell may name one, or mention tools at all.
func TestNoToolIsNamed(t *testing.T) {
	banned := regexp.MustCompile("(?i)tool|function|mcp|askbridge|ask_|_human|`|\\(\\)")
	for _, a := range Autonomies {
		for _, tier := range Tiers {
			if m := banned.FindString(standing[a][tier]); m != "" {
				t.Errorf("%s/%s mentions %q", a, tier, m)
			}
		}
	}
}

func TestParse(t *testing.T) {
	for _, a := range Autonomies {
		for _, s := range []string{a.String(), strings.ToUpper(a.String()), " " + a.String() + "\n"} {
			if got, err := ParseAutonomy(s); got != a || err != nil {
				t.Errorf("ParseAutonomy(%q) = %q, %v", s, got, err)
			}
		}
	}
	for _, tier := range Tiers {
		if got, err := ParseTier(" " + strings.ToUpper(tier.String())); got != tier || err != nil {
			t.Errorf("ParseTier(%q) = %q, %v", tier, got, err)
		}
	}
	for _, s := range []string{"", "none", "fully", "semi-auto"} {
		if _, err := ParseAutonomy(s); err == nil {
			t.Errorf("ParseAutonomy(%q) accepted", s)
		}
		if _, err := ParseTier(s); err == nil {
			t.Errorf("ParseTier(%q) accepted", s)
		}
	}
}

func TestTextRejectsUnknownLevelOrTier(t *testing.T) {
	if _, err := Text("reckless", TierFull, "", "", nil); err == nil {
		t.Error("Text accepted an unknown autonomy")
	}
	if _, err := Text(AutonomyFull, "", "", "", nil); err == nil {
		t.Error("Text accepted an empty tier")
	}
}

func TestTextAppendsMatchingExtras(t *testing.T) {
	extras := []Extra{
		{ID: "everyone", Text: "Log every decision.", Scope: ScopeAll},
		{ID: "reviewers", Text: "  Cite the line you object to.\n", Scope: ScopeRole, Value: "Reviewer"},
		{ID: "finance", Text: "Never move money.", Scope: ScopeDepartment, Value: "finance"},
		{ID: "eng", Text: "Prefer small PRs.", Scope: ScopeDepartment, Value: "engineering"},
	}
	base := standing[AutonomySemi][TierSummary]
	for _, tc := range []struct {
		role, dept string
		want       []string
	}{
		{"reviewer", "finance", []string{"Log every decision.", "Cite the line you object to.", "Never move money."}},
		{"", "", []string{"Log every decision."}},
		{"builder", "ENGINEERING", []string{"Log every decision.", "Prefer small PRs."}},
		{"finance", "reviewer", []string{"Log every decision."}}, // role and department do not cross
	} {
		got, err := Text(AutonomySemi, TierSummary, tc.role, tc.dept, extras)
		if err != nil {
			t.Fatal(err)
		}
		want := base + "\n\n" + strings.Join(tc.want, "\n\n")
		if got != want {
			t.Errorf("Text(role %q, department %q) =\n%q\nwant\n%q", tc.role, tc.dept, got, want)
		}
	}
}

func TestValidateExtras(t *testing.T) {
	good := Extra{ID: "a", Text: "Be brief.", Scope: ScopeAll}
	if err := ValidateExtras([]Extra{good, {ID: "b", Text: "x\ny\tz", Scope: ScopeRole, Value: "ops"}}); err != nil {
		t.Fatalf("valid extras: %v", err)
	}
	if err := ValidateExtras(nil); err != nil {
		t.Fatalf("no extras: %v", err)
	}
	for _, tc := range []struct {
		name string
		bad  Extra
		want string
	}{
		{"empty id", Extra{Text: "x", Scope: ScopeAll}, "id is empty"},
		{"spaced id", Extra{ID: " b", Text: "x", Scope: ScopeAll}, "leading or trailing space"},
		{"duplicate id", Extra{ID: "a", Text: "x", Scope: ScopeAll}, "also used by extra #0"},
		{"empty text", Extra{ID: "b", Text: " \n", Scope: ScopeAll}, "text is empty"},
		{"long text", Extra{ID: "b", Text: strings.Repeat("x", MaxExtraTextBytes+1), Scope: ScopeAll}, "more than"},
		{"control character", Extra{ID: "b", Text: "x\x1b[31m", Scope: ScopeAll}, "control character"},
		{"bad utf-8", Extra{ID: "b", Text: "x\xff", Scope: ScopeAll}, "UTF-8"},
		{"unknown scope", Extra{ID: "b", Text: "x", Scope: "team", Value: "y"}, `scope "team" is not one of`},
		{"scope in capitals", Extra{ID: "b", Text: "x", Scope: "All"}, `scope "All" is not one of`},
		{"role without value", Extra{ID: "b", Text: "x", Scope: ScopeRole}, "needs a value"},
		{"department without value", Extra{ID: "b", Text: "x", Scope: ScopeDepartment, Value: " "}, "needs a value"},
		{"all with value", Extra{ID: "b", Text: "x", Scope: ScopeAll, Value: "ops"}, "takes no value"},
	} {
		err := ValidateExtras([]Extra{good, tc.bad})
		var xe *ExtraError
		if !errors.As(err, &xe) {
			t.Errorf("%s: err = %v, want an *ExtraError", tc.name, err)
			continue
		}
		if xe.Index != 1 || xe.ID != tc.bad.ID || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "extra #1") {
			t.Errorf("%s: err = %v, want it to name extra #1 (id %q) and say %q", tc.name, err, tc.bad.ID, tc.want)
		}
		if _, terr := Text(AutonomyFull, TierFull, "ops", "", []Extra{good, tc.bad}); terr == nil {
			t.Errorf("%s: Text used a bad extra instead of refusing it", tc.name)
		}
	}
}

func TestValidateExtrasReportsEveryBadEntry(t *testing.T) {
	err := ValidateExtras([]Extra{
		{ID: "ok", Text: "x", Scope: ScopeAll},
		{ID: "one", Text: "", Scope: ScopeAll},
		{ID: "two", Text: "x", Scope: "nobody"},
	})
	for _, want := range []string{`extra #1 (id "one")`, `extra #2 (id "two")`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to mention %s", err, want)
		}
	}
}

func TestMatrixIsNotShared(t *testing.T) {
	// buildMatrix must hand out a fresh matrix, or the hole tests above
	// would punch holes in the one the package runs on.
	m := buildMatrix()
	delete(m, AutonomyFull)
	if _, ok := standing[AutonomyFull]; !ok || len(standing) != len(Autonomies) {
		t.Error("editing buildMatrix's result changed the standing matrix")
	}
}
