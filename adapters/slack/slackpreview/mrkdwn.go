package slackpreview

import (
	"html"
	"html/template"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mrkdwn draws a text object of type mrkdwn as Slack does: *bold*,
// _italic_, ~strike~, `code`, ```preformatted``` blocks, > quotes at
// the start of a line, <url|text> links, <@U…> and <#C…|name> mentions,
// <!here> and friends, the entities &amp; &lt; &gt;, and line breaks
// (kept by the page's pre-wrap, as Slack keeps them). What it does not
// draw is left as the literal text: :emoji: codes, and the bare URLs and
// names that Slack links by itself in a text object that is not verbatim.
func Mrkdwn(s string) template.HTML {
	var b strings.Builder
	parts := strings.Split(s, "```")
	if len(parts)%2 == 0 { // an unclosed fence is literal text
		n := len(parts)
		parts = append(parts[:n-2], parts[n-2]+"```"+parts[n-1])
	}
	for i, p := range parts {
		if i%2 == 1 {
			// A preformatted block is a block of its own: the line breaks
			// right inside its fences and right around it are not drawn.
			p = strings.TrimPrefix(strings.TrimSuffix(p, "\n"), "\n")
			b.WriteString(`<pre class="pre">` + literal(p) + `</pre>`)
			continue
		}
		if i > 0 {
			p = strings.TrimPrefix(p, "\n")
		}
		if i < len(parts)-1 {
			p = strings.TrimSuffix(p, "\n")
		}
		lines(&b, p)
	}
	return template.HTML(b.String())
}

// lines draws text with its quotes: a run of lines that start with a
// raw > (an escaped &gt; is a literal >) is one quote block.
func lines(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	var plain, quote []string
	flushPlain := func() {
		if plain != nil {
			b.WriteString(inline(strings.Join(plain, "\n")))
			plain = nil
		}
	}
	flushQuote := func() {
		if quote != nil {
			b.WriteString(`<blockquote class="quote">` + inline(strings.Join(quote, "\n")) + `</blockquote>`)
			quote = nil
		}
	}
	for _, l := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(l, ">"); ok {
			flushPlain()
			quote = append(quote, strings.TrimPrefix(rest, " "))
			continue
		}
		flushQuote()
		plain = append(plain, l)
	}
	flushPlain()
	flushQuote()
}

// styles are mrkdwn's paired markers and the elements they draw.
var styles = map[byte]string{'*': "b", '_': "i", '~': "s"}

// inline draws one run of text: code spans, <…> references and the
// paired markers, which may nest.
func inline(s string) string {
	var b, lit strings.Builder
	flush := func() {
		b.WriteString(literal(lit.String()))
		lit.Reset()
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j > 0 && !strings.Contains(s[i+1:i+1+j], "\n") {
				flush()
				b.WriteString(`<code class="code">` + literal(s[i+1:i+1+j]) + `</code>`)
				i += j + 2
				continue
			}
		case c == '<':
			if j := strings.IndexByte(s[i+1:], '>'); j > 0 && !strings.Contains(s[i+1:i+1+j], "\n") {
				if out, ok := reference(s[i+1 : i+1+j]); ok {
					flush()
					b.WriteString(out)
					i += j + 2
					continue
				}
			}
		case styles[c] != "":
			if j := closing(s, i); j > 0 {
				flush()
				tag := styles[c]
				b.WriteString("<" + tag + ">" + inline(s[i+1:j]) + "</" + tag + ">")
				i = j + 1
				continue
			}
		}
		lit.WriteByte(c)
		i++
	}
	flush()
	return b.String()
}

// closing finds the marker that closes the one at i, or -1: the opening
// one follows no letter or digit and precedes no space, the closing one
// follows no space and precedes no letter or digit, on the same line.
func closing(s string, i int) int {
	c := s[i]
	if r, _ := utf8.DecodeLastRuneInString(s[:i]); i > 0 && wordRune(r) {
		return -1
	}
	if r, _ := utf8.DecodeRuneInString(s[i+1:]); i+1 >= len(s) || unicode.IsSpace(r) {
		return -1
	}
	for j := i + 2; j < len(s); j++ {
		if s[j] == '\n' {
			return -1
		}
		if s[j] != c {
			continue
		}
		before, _ := utf8.DecodeLastRuneInString(s[:j])
		after, _ := utf8.DecodeRuneInString(s[j+1:])
		if !unicode.IsSpace(before) && (j+1 == len(s) || !wordRune(after)) {
			return j
		}
	}
	return -1
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// reference draws what Slack writes between < and >: a link, a mention of
// a person, a channel or a group, a special mention or a date. Anything
// else is not a reference and stays literal.
func reference(in string) (string, bool) {
	target, label, labelled := strings.Cut(in, "|")
	mention := func(text string) (string, bool) {
		return `<span class="mention">` + literal(text) + `</span>`, true
	}
	name := func(def string) string {
		if labelled {
			return label
		}
		return def
	}
	switch {
	case strings.HasPrefix(target, "@"):
		return mention("@" + name(target[1:]))
	case strings.HasPrefix(target, "#"):
		return mention("#" + name(target[1:]))
	case strings.HasPrefix(target, "!subteam^"):
		return mention("@" + name(strings.TrimPrefix(target, "!subteam^")))
	case strings.HasPrefix(target, "!date^"):
		return literal(label), labelled
	case target == "!here" || target == "!channel" || target == "!everyone":
		return mention("@" + target[1:])
	case strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "mailto:"):
		href := html.UnescapeString(target)
		return `<a class="link" href="` + html.EscapeString(href) + `">` + literal(name(target)) + `</a>`, true
	}
	return "", false
}

// literal is mrkdwn text with no markup left in it, as HTML: Slack's
// three entities read back, then escaped for HTML.
func literal(s string) string {
	return html.EscapeString(unescaper.Replace(s))
}

var unescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")
