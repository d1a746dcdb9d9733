package bolt_test

import (
	"testing"

	"github.com/askbridge/askbridge/internal/docmap"
)

// TestDocMapsEveryFile keeps doc.go's map of the files in step with the
// package: every file is named there, and nothing named there is gone.
func TestDocMapsEveryFile(t *testing.T) {
	docmap.DocMapsEveryFile(t, ".")
}
