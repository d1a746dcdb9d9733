package app

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/askbridge/askbridge/"

// TestImportsPointInwards keeps DESIGN.md's dependency laws by
// construction: fence imports nothing of ours; core imports fence and
// nothing else of ours, and its domain never imports its loops
// (core/loops runs over core's exported API); core/card imports core and
// fence, and core never imports core/card (the card points at the domain,
// never back); a store imports no adapter; an adapter imports no other
// adapter and no store (adapters/internal is shared by them all).
// Test files, and the packages that exist for tests (adaptertest, each
// platform's fake), are test helpers and may reach across.
func TestImportsPointInwards(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	imports := map[string]map[string]bool{} // package dir -> our imports
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if ours, ok := strings.CutPrefix(p, module); ok {
				imports[pkg][ours] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports["core"]) == 0 || len(imports["core/loops"]) == 0 || len(imports["adapters/slack"]) == 0 {
		t.Fatalf("read no imports of core or adapters/slack: %d packages read", len(imports))
	}
	top := func(p string) string { first, _, _ := strings.Cut(p, "/"); return first }
	adapter := func(p string) string { // adapters/<name>/... -> <name>
		_, rest, _ := strings.Cut(p, "/")
		name, _, _ := strings.Cut(rest, "/")
		return name
	}
	testHelper := func(p string) bool {
		base := p[strings.LastIndex(p, "/")+1:]
		return adapter(p) == "adaptertest" || strings.HasSuffix(base, "fake")
	}
	for pkg, ims := range imports {
		for im := range ims {
			var broken string
			switch {
			case top(pkg) == "fence" && top(im) != "fence":
				broken = "fence imports nothing of ours"
			case top(pkg) == "core" && !strings.HasPrefix(pkg, "core/loops") && strings.HasPrefix(im, "core/loops"):
				broken = "core's domain never imports its loops"
			case pkg == "core" && im == "core/card":
				broken = "core imports no card: the card points at the domain, never back"
			case pkg == "core/card" && im != "core" && top(im) != "fence":
				broken = "core/card imports core and fence and nothing else of ours"
			case top(pkg) == "core" && top(im) != "core" && top(im) != "fence":
				broken = "core imports fence and nothing else of ours"
			case top(pkg) == "store" && top(im) == "adapters":
				broken = "a store imports no adapter"
			case top(pkg) == "adapters" && !testHelper(pkg) && top(im) == "store":
				broken = "an adapter imports no store"
			case top(pkg) == "adapters" && !testHelper(pkg) && top(im) == "adapters" &&
				adapter(im) != adapter(pkg) && adapter(im) != "internal":
				broken = "an adapter imports no other adapter"
			}
			if broken != "" {
				t.Errorf("%s imports %s: %s", pkg, im, broken)
			}
		}
	}
}
