package directive_test

import (
	"fmt"

	"github.com/askbridge/askbridge/core/directive"
)

func ExampleText() {
	extras := []directive.Extra{
		{ID: "no-prod", Text: "Never touch production data without a ticket.", Scope: "department", Value: "payments"},
		{ID: "reviewers", Text: "Quote the line you object to.", Scope: "role", Value: "reviewer"},
	}
	text, err := directive.Text(directive.AutonomySemi, directive.TierMinimal, "builder", "payments", extras)
	if err != nil {
		panic(err)
	}
	fmt.Println(text)
	// Output:
	// Routine, easily reversible calls are yours; before a material (moves cost, scope, public behaviour, data, or someone else's work), hard-to-reverse (undoing it costs real rework, not a quick edit) choice, ask a human rather than guess.
	//
	// Never touch production data without a ticket.
}

func ExampleValidateExtras() {
	err := directive.ValidateExtras([]directive.Extra{
		{ID: "tone", Text: "Be brief.", Scope: "everyone"},
	})
	fmt.Println(err)
	// Output:
	// directive: extra #0 (id "tone"): scope "everyone" is not one of "all", "role", "department"
}
