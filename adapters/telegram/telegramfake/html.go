package telegramfake

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// allowedTags are the tags Telegram's HTML parse mode accepts.
var allowedTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "code": true, "pre": true, "blockquote": true,
}

// PlainText parses Telegram-style HTML the way the Bot API does for
// parse_mode=HTML: only the supported tags, balanced, and only the four
// named entities plus numeric ones. It returns the text a client shows
// (and what a reply's reply_to_message.text carries), or an error worded
// like Telegram's "can't parse entities".
func PlainText(s string) (string, error) {
	plain, _, err := Parse(s)
	return plain, err
}

// entityTypes are the Bot API entity types of the formatting tags.
var entityTypes = map[string]string{
	"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline", "ins": "underline",
	"s": "strikethrough", "strike": "strikethrough", "del": "strikethrough", "span": "spoiler",
	"tg-spoiler": "spoiler", "a": "text_link", "code": "code", "pre": "pre", "blockquote": "blockquote",
}

// Parse is PlainText plus the message entities Telegram derives from the
// markup (offsets and lengths in UTF-16 units, a link's target as its
// url), in the order their tags close: what a client, and a reply's
// reply_to_message, carries.
func Parse(s string) (string, []tgbotapi.MessageEntity, error) {
	var out strings.Builder
	var stack []string
	var starts []int
	var hrefs []string // each open tag's link target ("" but for <a>)
	var entities []tgbotapi.MessageEntity
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", nil, fmt.Errorf("Bad Request: can't parse entities: unclosed start tag at byte offset %d", i)
			}
			tag := s[i+1 : i+end]
			i += end + 1
			if strings.HasPrefix(tag, "/") {
				name := strings.TrimSpace(tag[1:])
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", nil, fmt.Errorf("Bad Request: can't parse entities: unexpected end tag %q", name)
				}
				start := starts[len(starts)-1]
				if n := utf16Len(out.String()) - start; n > 0 {
					entities = append(entities, tgbotapi.MessageEntity{Type: entityTypes[name], Offset: start, Length: n, URL: hrefs[len(hrefs)-1]})
				}
				stack, starts, hrefs = stack[:len(stack)-1], starts[:len(starts)-1], hrefs[:len(hrefs)-1]
				continue
			}
			name, attrs, _ := strings.Cut(tag, " ")
			if !allowedTags[name] {
				return "", nil, fmt.Errorf("Bad Request: can't parse entities: unsupported start tag %q", name)
			}
			if name == "a" && !strings.HasPrefix(strings.TrimSpace(attrs), `href="`) {
				return "", nil, fmt.Errorf("Bad Request: can't parse entities: a tag without href")
			}
			href := ""
			if name == "a" {
				href, _, _ = strings.Cut(strings.TrimPrefix(strings.TrimSpace(attrs), `href="`), `"`)
			}
			stack = append(stack, name)
			starts = append(starts, utf16Len(out.String()))
			hrefs = append(hrefs, href)
		case '&':
			end := strings.IndexByte(s[i:], ';')
			if end < 0 {
				return "", nil, fmt.Errorf("Bad Request: can't parse entities: unterminated entity at byte offset %d", i)
			}
			ent := s[i+1 : i+end]
			i += end + 1
			switch {
			case ent == "lt":
				out.WriteByte('<')
			case ent == "gt":
				out.WriteByte('>')
			case ent == "amp":
				out.WriteByte('&')
			case ent == "quot":
				out.WriteByte('"')
			case strings.HasPrefix(ent, "#x") || strings.HasPrefix(ent, "#X"):
				n, err := strconv.ParseUint(ent[2:], 16, 32)
				if err != nil {
					return "", nil, fmt.Errorf("Bad Request: can't parse entities: bad entity %q", ent)
				}
				out.WriteRune(rune(n))
			case strings.HasPrefix(ent, "#"):
				n, err := strconv.ParseUint(ent[1:], 10, 32)
				if err != nil {
					return "", nil, fmt.Errorf("Bad Request: can't parse entities: bad entity %q", ent)
				}
				out.WriteRune(rune(n))
			default:
				return "", nil, fmt.Errorf("Bad Request: can't parse entities: unsupported entity %q", ent)
			}
		case '>':
			return "", nil, fmt.Errorf("Bad Request: can't parse entities: unexpected '>' at byte offset %d", i)
		default:
			out.WriteByte(c)
			i++
		}
	}
	if len(stack) > 0 {
		return "", nil, fmt.Errorf("Bad Request: can't parse entities: can't find end tag corresponding to start tag %q", stack[len(stack)-1])
	}
	return out.String(), entities, nil
}

// utf16Len is how Telegram counts a text's length.
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }
