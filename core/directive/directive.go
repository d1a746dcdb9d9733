// Package directive holds the standing "ask rather than guess" text that an
// agent's system prompt carries: one wording for each autonomy level at each
// verbosity tier, plus any extra directives an operator configures.
//
// The text never names a tool. A model that has been taught a tool's name
// calls it even when an operator has switched the tool off, so the
// directive describes the behaviour and leaves the mechanics to whatever
// tools the agent actually has.
package directive

import (
	"fmt"
	"strings"
)

// Autonomy is how much an agent may decide on its own.
type Autonomy string

// The autonomy levels, from most to least independent.
const (
	AutonomyFull       Autonomy = "full"
	AutonomySemi       Autonomy = "semi"
	AutonomySupervised Autonomy = "supervised"
	AutonomyLocked     Autonomy = "locked"
)

// Autonomies lists every level, in order; the matrix must have all of them.
var Autonomies = []Autonomy{AutonomyFull, AutonomySemi, AutonomySupervised, AutonomyLocked}

// String returns the level as configuration spells it.
func (a Autonomy) String() string { return string(a) }

// ParseAutonomy reads a level as configuration spells it, ignoring case and
// surrounding space.
func ParseAutonomy(s string) (Autonomy, error) {
	for _, a := range Autonomies {
		if strings.EqualFold(strings.TrimSpace(s), string(a)) {
			return a, nil
		}
	}
	return "", fmt.Errorf("directive: autonomy %q is not one of %v", s, Autonomies)
}

// Tier is how much room the directive may take in a prompt.
type Tier string

// The verbosity tiers.
const (
	TierFull    Tier = "full"
	TierSummary Tier = "summary"
	TierMinimal Tier = "minimal"
)

// Tiers lists every tier, in order; the matrix must have all of them.
var Tiers = []Tier{TierFull, TierSummary, TierMinimal}

// String returns the tier as configuration spells it.
func (t Tier) String() string { return string(t) }

// ParseTier reads a tier as configuration spells it, ignoring case and
// surrounding space.
func ParseTier(s string) (Tier, error) {
	for _, t := range Tiers {
		if strings.EqualFold(strings.TrimSpace(s), string(t)) {
			return t, nil
		}
	}
	return "", fmt.Errorf("directive: tier %q is not one of %v", s, Tiers)
}

// Text returns the directive for an agent: the standing text for its
// autonomy level and tier, then each extra that matches its role or
// department, in the order given, separated by blank lines.
//
// It validates extras first (see ValidateExtras), so a caller that skipped
// validation at load still cannot drop a bad entry silently.
func Text(a Autonomy, t Tier, role, department string, extras []Extra) (string, error) {
	row, ok := standing[a]
	if !ok {
		return "", fmt.Errorf("directive: autonomy %q is not one of %v", a, Autonomies)
	}
	text, ok := row[t]
	if !ok {
		return "", fmt.Errorf("directive: tier %q is not one of %v", t, Tiers)
	}
	if err := ValidateExtras(extras); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(text)
	for _, e := range extras {
		if e.matches(role, department) {
			b.WriteString("\n\n")
			b.WriteString(strings.TrimSpace(e.Text))
		}
	}
	return b.String(), nil
}
