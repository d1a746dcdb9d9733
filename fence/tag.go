// Package fence wraps text that came from outside the server (answers,
// reasons, free text and display names written by humans) before it reaches
// a model, so that nothing a human types can end its region or pass itself
// off as something the server said.
//
// Untrusted text stays a plain string until Wrap turns it into a Fenced
// value; only this package can make one, so code that builds model input
// from Fenced values cannot splice raw text in by mistake. BuildResume
// composes the message an agent resumes with: a trusted header carrying only
// server-made facts, then every human-written byte inside a region.
package fence

import "strings"

// reservedPrefix starts every tag name. The escaper matches this prefix
// rather than each name, so it covers the whole closed set, the trusted
// header, and forged names such as <askbridge-system> that are no tag of
// ours but would read like one to a model.
const reservedPrefix = "askbridge"

// Tag names one kind of fenced region. The set is closed: the zero Tag is
// not a tag, and the only tags are the exported values below.
type Tag struct{ name string }

// The closed set of region tags. Each names what the region holds so that a
// model reading the text knows what it is looking at. All start with
// "askbridge-", the prefix the escaper looks for.
var (
	// TagDeciderName holds the display name of whoever closed the question.
	TagDeciderName = Tag{"askbridge-untrusted-decider-name"}
	// TagAnswer holds a free-text answer.
	TagAnswer = Tag{"askbridge-untrusted-answer"}
	// TagReason holds a reason: why an approval was denied, why a question
	// was declined or cancelled.
	TagReason = Tag{"askbridge-untrusted-reason"}
	// TagWriteup holds the write-up of the option that was chosen.
	TagWriteup = Tag{"askbridge-untrusted-writeup"}
	// TagDecline holds DeclineText. It is server-made, and fenced anyway so
	// that no code path ever learns to emit unfenced text.
	TagDecline = Tag{"askbridge-untrusted-decline"}
	// TagOptionID holds the id of a chosen option, as the asking agent
	// defined it.
	TagOptionID = Tag{"askbridge-untrusted-option-id"}
	// TagItemID holds the id of a form item, as the asking agent defined it.
	TagItemID = Tag{"askbridge-untrusted-item-id"}
	// TagItemAnswer holds the free text given for one form item.
	TagItemAnswer = Tag{"askbridge-untrusted-item-answer"}
	// TagArguments holds tool-call arguments a person edited before
	// approving them: JSON, but written by a person all the same.
	TagArguments = Tag{"askbridge-untrusted-arguments"}
	// TagToolCallID holds the id of one tool call of a batch, as the
	// asking agent (or its model) made it.
	TagToolCallID = Tag{"askbridge-untrusted-tool-call-id"}
)

// headerName is the trusted header's tag. It is not a region tag (nothing
// can be wrapped under it) but it shares reservedPrefix, so untrusted text
// can never contain a second header.
const headerName = reservedPrefix + "-resume"

var (
	allTags   = []Tag{TagDeciderName, TagAnswer, TagReason, TagWriteup, TagDecline, TagOptionID, TagItemID, TagItemAnswer, TagArguments, TagToolCallID}
	tagByName = mustIndexTags(allTags)
)

// mustIndexTags refuses to initialise the package if a tag would escape the
// escaper (a name outside reservedPrefix) or if two tags share a name, since
// either would let one region be closed by another's tag.
func mustIndexTags(tags []Tag) map[string]Tag {
	if err := checkTags(tags); err != nil {
		panic(err)
	}
	m := make(map[string]Tag, len(tags))
	for _, t := range tags {
		m[t.name] = t
	}
	return m
}

func checkTags(tags []Tag) error {
	seen := map[string]bool{headerName: true}
	for _, t := range tags {
		if !strings.HasPrefix(t.name, reservedPrefix+"-") {
			return &tagError{t.name, "does not start with " + reservedPrefix + "-"}
		}
		for _, c := range t.name {
			if !(c >= 'a' && c <= 'z' || c == '-') {
				return &tagError{t.name, "has a character outside a-z and -"}
			}
		}
		if seen[t.name] {
			return &tagError{t.name, "is used twice (or is the header's name)"}
		}
		seen[t.name] = true
	}
	return nil
}

type tagError struct{ name, problem string }

func (e *tagError) Error() string { return "fence: tag " + e.name + " " + e.problem }

// String returns the tag's name, as it appears between angle brackets.
func (t Tag) String() string { return t.name }

// valid reports whether t is one of the closed set (and not the zero Tag).
func (t Tag) valid() bool {
	_, ok := tagByName[t.name]
	return ok && t.name != ""
}

// Tags returns every region tag, for callers that document or check the
// set. The slice is a copy.
func Tags() []Tag { return append([]Tag(nil), allTags...) }
