package redis_test

import (
	"testing"

	"github.com/askbridge/askbridge/internal/docmap"
)

// TestDocMapsEveryFile keeps doc.go's map in step with the package: every
// Go file and every Lua script it runs is named there, and nothing named
// there is gone.
func TestDocMapsEveryFile(t *testing.T) {
	docmap.DocMapsEveryFile(t, ".", "lua/*.lua")
}
