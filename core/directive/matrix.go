package directive

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// matrix holds the standing text for each autonomy level at each tier.
type matrix map[Autonomy]map[Tier]string

// standing is the matrix, checked for totality as the package initialises:
// a missing cell would otherwise surface as an agent that silently runs
// without the directive, so the program refuses to start instead.
var standing = mustMatrix(buildMatrix())

// mustMatrix returns m, or panics if checkMatrix finds a hole in it.
func mustMatrix(m matrix) matrix {
	if err := checkMatrix(m); err != nil {
		panic(err)
	}
	return m
}

// checkMatrix reports every missing or empty cell, and every row or column
// that is not a known level or tier.
func checkMatrix(m matrix) error {
	var errs []error
	for _, a := range Autonomies {
		for _, t := range Tiers {
			if strings.TrimSpace(m[a][t]) == "" {
				errs = append(errs, fmt.Errorf("directive: no text for autonomy %q at tier %q", a, t))
			}
		}
	}
	for a, row := range m {
		if !slices.Contains(Autonomies, a) {
			errs = append(errs, fmt.Errorf("directive: matrix has unknown autonomy %q", a))
		}
		for t := range row {
			if !slices.Contains(Tiers, t) {
				errs = append(errs, fmt.Errorf("directive: matrix has unknown tier %q for autonomy %q", t, a))
			}
		}
	}
	return errors.Join(errs...)
}

// The two definitions every full-tier text carries. Shorter tiers fold them
// into the sentence as parentheses, so no tier leaves "material" or "hard
// to reverse" to the model's imagination.
const (
	definitions = "A choice is material when it moves cost, scope, public behaviour, data, or someone else's work. " +
		"It is hard to reverse when undoing it would cost real rework, not a quick edit."
	short = "material (it moves cost, scope, public behaviour, data, or someone else's work) and hard to reverse (undoing it costs real rework, not a quick edit)"
	tiny  = "material (moves cost, scope, public behaviour, data, or someone else's work), hard-to-reverse (undoing it costs real rework, not a quick edit)"

	howToAsk = "When you ask, make the question complete in one go: what you are deciding, the options you see, the trade-off of each, and the one you recommend, with why. " +
		"If the human declines to answer, proceed on your own best judgement (never with a call that was not approved) and state the assumption you made."
)

// buildMatrix writes out every cell. Each says the same thing (ask rather
// than guess on a material, hard-to-reverse choice) in the terms of its
// level: what the agent may decide alone, and when it must raise a fork.
func buildMatrix() matrix {
	return matrix{
		AutonomyFull: {
			TierFull: "You have full autonomy: make your own calls and keep the work moving. " +
				"Autonomy is no licence to guess at an irreversible choice, though. " +
				"When a choice is both material and hard to reverse, and neither your instructions nor what you can see settle it, ask a human rather than guess.\n\n" +
				definitions + " A choice that is not both is yours: make it, and record the assumption where a reader will look for it.\n\n" +
				howToAsk,
			TierSummary: "You have full autonomy, but it is no licence to guess at an irreversible choice. " +
				"Before a choice that is " + short + ", ask a human rather than guess: give the options, their trade-offs and your recommendation. " +
				"Decide everything else yourself.",
			TierMinimal: "Full autonomy is no licence to guess at an irreversible choice: before any " + tiny + " choice, ask a human rather than guess.",
		},
		AutonomySemi: {
			TierFull: "You have partial autonomy. Routine, easily reversible calls are yours: make them without asking, and note the assumption where it matters. " +
				"When a choice is material and hard to reverse, ask a human rather than guess, even when one option looks likely.\n\n" +
				definitions + " A choice that is only one of the two is still yours, but say what you chose.\n\n" +
				howToAsk,
			TierSummary: "Routine, easily reversible calls are yours; make them and move on. " +
				"When a choice is " + short + ", ask a human rather than guess, with the options, their trade-offs and your recommendation.",
			TierMinimal: "Routine, easily reversible calls are yours; before a " + tiny + " choice, ask a human rather than guess.",
		},
		AutonomySupervised: {
			TierFull: "You are supervised: a human reviews your plan before you carry it out. " +
				"Do not settle a material, hard-to-reverse choice by guessing. " +
				"When you can see the choice while planning, fold the question into the plan you propose: name the choice, lay out the options with their trade-offs, and recommend one, so that the review settles it. " +
				"When a fork appears after the plan is agreed, raise it the moment it appears, and ask a human rather than guess before going down either branch.\n\n" +
				definitions + "\n\n" +
				howToAsk,
			TierSummary: "A human reviews your plan. Fold any question about a choice that is " + short + " into the plan you propose, with the options and your recommendation; " +
				"if such a fork appears later, raise it the moment it appears and ask a human rather than guess.",
			TierMinimal: "Fold every " + tiny + " question into your proposed plan, and raise a new fork the moment it appears: ask rather than guess.",
		},
		AutonomyLocked: {
			TierFull: "You are locked down: a human makes the choices that matter, and your part is to put them in front of that human in time. " +
				"When you reach a material, hard-to-reverse choice, surface the fork, with its alternatives, while it is still open: before any step that would close off a branch. " +
				"Ask a human rather than guess, and wait for the answer; do not take a branch and report it afterwards, however obvious it looks.\n\n" +
				definitions + "\n\n" +
				howToAsk,
			TierSummary: "A human makes the choices that matter. At any choice that is " + short + ", surface the fork, with its alternatives and your recommendation, while it is still open, " +
				"and ask a human rather than guess; never take a branch and report it afterwards.",
			TierMinimal: "Surface every " + tiny + " fork, with its alternatives, while it is still open: ask a human rather than guess.",
		},
	}
}
