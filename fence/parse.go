package fence

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrMalformed marks text that is not a well-formed resume message.
var ErrMalformed = errors.New("fence: malformed resume message")

// Region is one fenced region of a parsed message, with its content
// un-escaped: exactly the cleaned text that was wrapped.
type Region struct {
	Tag     Tag
	Content string
}

// ParsedResume is a resume message taken apart.
type ParsedResume struct {
	QuestionID string
	Verb       Verb
	// Regions are the fenced regions in order.
	Regions []Region
	// Lines are the trusted lines between the header and the regions, in
	// order; every one of them was written by the server.
	Lines []string
}

var headerRE = regexp.MustCompile(`^<` + headerName + ` question="([A-Za-z0-9_.:~-]{1,128})" verb="([A-Z_]+)"/>$`)

// ParseResume takes apart a message made by BuildResume. It is strict: the
// first line must be the header, and no other line outside a region, and
// nothing inside one, may read as a tag of ours. So a successful parse
// means there was exactly one trusted header, and that every region ends
// where BuildResume ended it.
func ParseResume(text string) (ParsedResume, error) {
	lines := strings.Split(text, "\n")
	m := headerRE.FindStringSubmatch(lines[0])
	if m == nil {
		return ParsedResume{}, fmt.Errorf("%w: the first line is not the header", ErrMalformed)
	}
	v, err := ParseVerb(m[2])
	if err != nil {
		return ParsedResume{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	p := ParsedResume{QuestionID: m[1], Verb: v}
	for i := 1; i < len(lines); i++ {
		l := lines[i]
		tag, open := openingTag(l)
		if !open {
			if hasTagForm(l) {
				return ParsedResume{}, fmt.Errorf("%w: line %d reads as a tag outside any region", ErrMalformed, i+1)
			}
			p.Lines = append(p.Lines, l)
			continue
		}
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if lines[j] == "</"+tag.name+">" {
				end = j
				break
			}
		}
		if end < 0 {
			return ParsedResume{}, fmt.Errorf("%w: region %s opened on line %d is never closed", ErrMalformed, tag.name, i+1)
		}
		body := strings.Join(lines[i+1:end], "\n")
		if hasTagForm(body) {
			return ParsedResume{}, fmt.Errorf("%w: region %s opened on line %d holds an unescaped tag", ErrMalformed, tag.name, i+1)
		}
		p.Regions = append(p.Regions, Region{Tag: tag, Content: unescape(body)})
		i = end
	}
	return p, nil
}

// openingTag reports whether l is exactly the opening line of a region.
func openingTag(l string) (Tag, bool) {
	if len(l) < 3 || l[0] != '<' || l[len(l)-1] != '>' {
		return Tag{}, false
	}
	t, ok := tagByName[l[1:len(l)-1]]
	return t, ok
}

// ParseRegion reads s as exactly one region made by Wrap (Fenced.String):
// the opening line of a tag of ours, text holding no tag form, and the
// same tag's closing line, nothing before or after. It gives back the
// cleaned text that was wrapped. The fenced strings in a resume's data
// (Structured) are read with it, and a string that does not parse is not
// a region, whatever it looks like.
func ParseRegion(s string) (Region, error) {
	open, rest, ok := strings.Cut(s, "\n")
	tag, isOpen := openingTag(open)
	if !ok || !isOpen {
		return Region{}, fmt.Errorf("%w: not a region: the first line is not an opening tag of ours", ErrMalformed)
	}
	body, ok := strings.CutSuffix(rest, "\n</"+tag.name+">")
	if !ok {
		return Region{}, fmt.Errorf("%w: region %s does not end with its closing line", ErrMalformed, tag.name)
	}
	if hasTagForm(body) {
		return Region{}, fmt.Errorf("%w: region %s holds an unescaped tag", ErrMalformed, tag.name)
	}
	return Region{Tag: tag, Content: unescape(body)}, nil
}
