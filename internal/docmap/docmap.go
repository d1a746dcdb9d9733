// Package docmap keeps the packages' maps of their files true: core and
// the stores describe every file in their doc.go, and their tests check
// the map against the directory. It is a package of its own so that a
// test of core does not link the store suite for it.
package docmap

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// DocMapsEveryFile fails t for each file of the package in dir that the
// package comment of dir's doc.go does not name, and for each file name
// that comment gives that dir does not hold, so a package's map of its
// files (core/doc.go's "Files", the stores' doc.go) cannot drift from
// them as files are added, split, renamed or removed.
//
// The files checked are the package's non-test .go files but doc.go
// itself and, for each pattern of also (a filepath.Glob pattern relative
// to dir, such as the Redis store's "lua/*.lua"), the files it matches,
// which the comment names by their base names. A name counts as given
// where it stands as a word: "kind.go" is not given by "next_kinds.go".
// A name written after its package's name ("core/card's kinds.go",
// "core/loops' deliver.go") is another package's file: it neither names
// this package's file nor is checked against dir.
func DocMapsEveryFile(t testing.TB, dir string, also ...string) {
	t.Helper()
	doc := filepath.Join(dir, "doc.go")
	f, err := parser.ParseFile(token.NewFileSet(), doc, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatalf("%s has no package comment to map the files in", doc)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{} // every file of dir, tests too: a map may point at a test
	var want []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		held[name] = true
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") && name != "doc.go" {
			want = append(want, name)
		}
	}
	exts := []string{"go"}
	for _, pattern := range also {
		matched, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		if len(matched) == 0 {
			t.Errorf("%q matches no file in %s, so it checks nothing", pattern, dir)
		}
		for _, m := range matched {
			name := filepath.Base(m)
			held[name] = true
			want = append(want, name)
			if ext := strings.TrimPrefix(filepath.Ext(name), "."); !slices.Contains(exts, ext) {
				exts = append(exts, ext)
			}
		}
	}
	text := f.Doc.Text()
	named := map[string]bool{}
	for i, ext := range exts {
		exts[i] = regexp.QuoteMeta(ext)
	}
	re := regexp.MustCompile(`\b[A-Za-z0-9_]+\.(?:` + strings.Join(exts, "|") + `)\b`)
	for _, at := range re.FindAllStringIndex(text, -1) {
		before := strings.TrimRight(text[:at[0]], " \t\n")
		if strings.HasSuffix(before, "'s") || strings.HasSuffix(before, "'") {
			continue // another package's file: core/card's kinds.go, core/loops' deliver.go
		}
		named[text[at[0]:at[1]]] = true
	}
	slices.Sort(want)
	for _, name := range want {
		if !named[name] {
			t.Errorf("%s does not name %s: add a line on what it holds and, if it is not plain, why it is apart", doc, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(named)) {
		if !held[name] {
			t.Errorf("%s names %s, which is not a file in %s: drop or rename it in the map", doc, name, dir)
		}
	}
}
