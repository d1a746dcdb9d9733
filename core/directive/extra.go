package directive

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Extra is an operator's own directive, appended below the standing text
// for the agents it matches.
type Extra struct {
	// ID names the entry in errors and logs; unique within a list.
	ID string `yaml:"id" json:"id"`
	// Text is appended as it is (trimmed). Operators write it, so it is
	// trusted, unlike anything a human answers with.
	Text string `yaml:"text" json:"text"`
	// Scope is "all", "role" or "department".
	Scope string `yaml:"scope" json:"scope"`
	// Value is the role or department matched (case-insensitively); it must
	// be empty when Scope is "all".
	Value string `yaml:"value,omitempty" json:"value,omitempty"`
}

// The scopes an Extra may have.
const (
	ScopeAll        = "all"
	ScopeRole       = "role"
	ScopeDepartment = "department"
)

// MaxExtraTextBytes caps one extra's text, so that a stray paste cannot
// crowd the standing directive out of a prompt.
const MaxExtraTextBytes = 4096

// ExtraError is one bad entry in a list of extras. It names the entry by
// position and id, so an operator can find it in the file.
type ExtraError struct {
	Index   int
	ID      string
	Problem string
}

func (e *ExtraError) Error() string {
	return fmt.Sprintf("directive: extra #%d (id %q): %s", e.Index, e.ID, e.Problem)
}

// ValidateExtras checks a list of extras as loaded from configuration. It
// reports every bad entry, each as an *ExtraError joined into one error,
// rather than dropping any: an operator who wrote a directive should learn
// that it is not in force.
func ValidateExtras(extras []Extra) error {
	var errs []error
	bad := func(i int, problem string, args ...any) {
		errs = append(errs, &ExtraError{Index: i, ID: extras[i].ID, Problem: fmt.Sprintf(problem, args...)})
	}
	first := map[string]int{}
	for i, e := range extras {
		switch {
		case strings.TrimSpace(e.ID) == "":
			bad(i, "id is empty")
		case e.ID != strings.TrimSpace(e.ID):
			bad(i, "id has leading or trailing space")
		default:
			if j, dup := first[e.ID]; dup {
				bad(i, "id is also used by extra #%d", j)
			} else {
				first[e.ID] = i
			}
		}
		switch {
		case strings.TrimSpace(e.Text) == "":
			bad(i, "text is empty")
		case len(e.Text) > MaxExtraTextBytes:
			bad(i, "text is %d bytes, more than %d", len(e.Text), MaxExtraTextBytes)
		case !utf8.ValidString(e.Text):
			bad(i, "text is not valid UTF-8")
		case strings.IndexFunc(e.Text, isBadControl) >= 0:
			bad(i, "text has a control character other than newline or tab")
		}
		switch e.Scope {
		case ScopeAll:
			if e.Value != "" {
				bad(i, "scope %q takes no value, got %q", e.Scope, e.Value)
			}
		case ScopeRole, ScopeDepartment:
			if strings.TrimSpace(e.Value) == "" {
				bad(i, "scope %q needs a value naming the %s", e.Scope, e.Scope)
			}
		default:
			bad(i, "scope %q is not one of %q, %q, %q", e.Scope, ScopeAll, ScopeRole, ScopeDepartment)
		}
	}
	return errors.Join(errs...)
}

func isBadControl(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }

// matches reports whether e applies to an agent with this role and
// department. An agent without a role matches no role-scoped extra.
func (e Extra) matches(role, department string) bool {
	v := strings.TrimSpace(e.Value)
	switch e.Scope {
	case ScopeAll:
		return true
	case ScopeRole:
		return role != "" && strings.EqualFold(v, strings.TrimSpace(role))
	case ScopeDepartment:
		return department != "" && strings.EqualFold(v, strings.TrimSpace(department))
	}
	return false
}
