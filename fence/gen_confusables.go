//go:build ignore

// gen_confusables writes confusables.go from Unicode's confusables.txt
// (UTS #39, https://www.unicode.org/Public/security/): every character
// the file lists as confusable with an ASCII letter (in either case; the
// letters of reservedPrefix for the tag matcher, and every other one for
// Fold, which tells a label from askbridge's own), with the capital I
// ("l", its prototype), or with a bracket or slash of a tag, that
// compatibility decomposition does not already fold to the same thing.
// Run it from fence/ with the file's path:
//
//	go run gen_confusables.go confusables.txt
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/format"
	"log"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// perLine is how many entries a line of the table holds, which keeps
// the file short enough to read.
const perLine = 6

// letters are the letters whose lookalikes the table folds: every ASCII
// letter, so that a label spelled in lookalikes reads as its Latin
// spelling (Fold), and with them the letters of reservedPrefix.
const letters = "abcdefghijklmnopqrstuvwxyz"

// prototypes are the targets confusables.txt uses for lookalikes of a
// letter that is not itself ASCII: small capitals (в and ᏼ map to ʙ, н
// to ʜ, т to ᴛ), the kra (к and κ map to ĸ), the dotless j, and l, the
// prototype of the capital I (I, 1, | and Ӏ map to l). Each folds to the
// letter it reads as, and so do they. The small capital L, and the
// lookalikes of L, fold as l does, to "i": fold reads a letter alike in
// either case, and l is I's.
var prototypes = map[rune]string{
	'ᴀ': "a", 'ʙ': "b", 'ᴅ': "d", 'ᴇ': "e", 'ɢ': "g", 'ĸ': "k", 'ʀ': "r", 'ɪ': "i", 'ꜱ': "s",
	'ʜ': "h", 'ᴊ': "j", 'ȷ': "j", 'ᴘ': "p", 'ᴛ': "t", 'ʟ': "i",
	'l': "i",
}

// asRead is what a target of confusables.txt reads as in a tag, or "".
func asRead(target []rune) string {
	if len(target) != 1 {
		return ""
	}
	t := target[0]
	if s, ok := prototypes[t]; ok {
		return s
	}
	if l := unicode.ToLower(t); t < utf8.RuneSelf && strings.ContainsRune(letters, l) {
		if s, ok := prototypes[l]; ok {
			return s // L reads as l does
		}
		return string(l)
	}
	if strings.ContainsRune(`<>/\-`, t) {
		return string(t)
	}
	return ""
}

// decomposed is r as compatibility decomposition and lower case alone
// read it, which fence's fold does before consulting the table (an ASCII
// l, or L, read as the "i" it folds to).
func decomposed(r rune) string {
	var b strings.Builder
	for _, c := range norm.NFKD.String(string(r)) {
		if !unicode.In(c, unicode.Mn, unicode.Me, unicode.Mc) {
			c = unicode.ToLower(c)
			if s, ok := prototypes[c]; ok && c < utf8.RuneSelf {
				b.WriteString(s)
			} else {
				b.WriteRune(c)
			}
		}
	}
	return b.String()
}

// keep reports whether r belongs in the table as s: only where fold would
// not read it so already, and never where decomposition reads it as
// something else the tag matcher relies on. A combining mark (decomposed
// to "") stays invisible to the matcher, so that it cannot split a tag's
// name, and a character that decomposes to ASCII keeps that reading (ſ is
// an s to the matcher, though UTS #39 likens it to f).
func keep(r rune, s string) bool {
	d := decomposed(r)
	if s == "" || d == s || d == "" {
		return false
	}
	if r < utf8.RuneSelf {
		return unicode.ToLower(r) != []rune(s)[0]
	}
	nfkd := norm.NFKD.String(string(r))
	return nfkd == string(r) || !isASCII(nfkd)
}

// isASCII reports whether s is ASCII throughout.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: go run gen_confusables.go confusables.txt")
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	table := map[rune]string{}
	for r, s := range prototypes {
		table[r] = s
	}
	var header []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "\uFEFF")
		if strings.HasPrefix(line, "#") {
			// The file's name, date, version and terms go into ours.
			h := strings.TrimSpace(strings.TrimPrefix(line, "#"))
			for _, p := range []string{"confusables.txt", "Date:", "Version:", "©", "For terms of use"} {
				if strings.HasPrefix(h, p) && len(header) < 5 {
					header = append(header, h)
				}
			}
			continue
		}
		fields := strings.Split(strings.SplitN(line, "#", 2)[0], ";")
		if len(fields) < 2 {
			continue
		}
		src, err := strconv.ParseUint(strings.TrimSpace(fields[0]), 16, 32)
		if err != nil {
			log.Fatalf("%q: %v", line, err)
		}
		var target []rune
		for _, h := range strings.Fields(fields[1]) {
			c, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				log.Fatalf("%q: %v", line, err)
			}
			target = append(target, rune(c))
		}
		r := rune(src)
		if s := asRead(target); keep(r, s) {
			table[r] = s
		}
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	keys := make([]rune, 0, len(table))
	for r := range table {
		keys = append(keys, r)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by gen_confusables.go from Unicode's confusables.txt; DO NOT EDIT.\n")
	for _, h := range header {
		fmt.Fprintf(&b, "// %s\n", h)
	}
	b.WriteString("\npackage fence\n\n")
	b.WriteString("// confusableFold maps each character UTS #39 lists as confusable with an\n")
	b.WriteString("// ASCII letter, or a bracket, slash or hyphen of our tags' spelling (see\n")
	b.WriteString("// gen_confusables.go), onto the ASCII one it reads as: \"i\" for\n")
	b.WriteString("// lookalikes of l, L and the capital I. Entries are grouped by what they\n")
	b.WriteString("// read as, a few to a line, the characters themselves shown after.\n")
	b.WriteString("var confusableFold = map[rune]string{\n")
	sort.SliceStable(keys, func(i, j int) bool { return table[keys[i]] < table[keys[j]] })
	for i := 0; i < len(keys); {
		s := table[keys[i]]
		fmt.Fprintf(&b, "\t// %q\n", s)
		for i < len(keys) && table[keys[i]] == s {
			var line, shown []string
			for ; i < len(keys) && table[keys[i]] == s && len(line) < perLine; i++ {
				r := keys[i]
				line = append(line, fmt.Sprintf("0x%04X: %q,", r, s))
				if unicode.IsGraphic(r) && !unicode.In(r, unicode.M) && r != ' ' {
					shown = append(shown, string(r))
				}
			}
			fmt.Fprintf(&b, "\t%s // %s\n", strings.Join(line, " "), strings.Join(shown, " "))
		}
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("confusables.go", src, 0o644); err != nil {
		log.Fatal(err)
	}
}
