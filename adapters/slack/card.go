package slack

import (
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/slack-go/slack"
)

// QuestionOfCard reads which question a Slack message is the card of,
// from the message itself: the id in its head block's block_id and the
// question id of every button's ref. All of them must name the same valid
// question; a message with none (not one of our cards) or with ones that
// disagree is not a card.
//
// Nothing else is trusted from the message: the caller then checks that
// the question recorded a card at exactly that channel and ts, so a
// look-alike message posted by someone else cannot stand in for a card.
func QuestionOfCard(blocks slack.Blocks) (core.QuestionID, bool) {
	var id core.QuestionID
	agree := true
	see := func(candidate core.QuestionID) {
		if !core.ValidID(candidate) {
			agree = false
			return
		}
		if id != "" && id != candidate {
			agree = false
		}
		id = candidate
	}
	seeButton := func(b *slack.ButtonBlockElement) {
		if b == nil {
			return
		}
		ref, err := core.DecodeRef(b.Value)
		if err != nil {
			agree = false
			return
		}
		see(ref.QuestionID)
	}
	for _, b := range blocks.BlockSet {
		switch b := b.(type) {
		case *slack.SectionBlock:
			if b == nil {
				continue
			}
			if rest, ok := strings.CutPrefix(b.BlockID, headPrefix); ok {
				see(core.QuestionID(rest))
			}
			if b.Accessory != nil {
				seeButton(b.Accessory.ButtonElement)
			}
		case *slack.ActionBlock:
			if b == nil || b.Elements == nil {
				continue
			}
			for _, el := range b.Elements.ElementSet {
				if btn, ok := el.(*slack.ButtonBlockElement); ok {
					seeButton(btn)
				}
			}
		}
	}
	if !agree || id == "" {
		return "", false
	}
	return id, true
}

// reminderBlock is the block_id of a reminder's one block (Reminder).
const reminderBlock = "reminder"

// QuestionOfReminder reads which question a reminder posted where its
// card is not names: the one code span of its one block. Only askbridge
// writes a backtick there (esc turns every backtick of an agent's text
// into a look-alike), so the span is the id Reminder put in. A reminder
// in its card's thread names none: a reply there is the card's already.
// The caller checks that the message is our bot's.
func QuestionOfReminder(blocks slack.Blocks) (core.QuestionID, bool) {
	if len(blocks.BlockSet) != 1 {
		return "", false
	}
	b, ok := blocks.BlockSet[0].(*slack.SectionBlock)
	if !ok || b == nil || b.BlockID != reminderBlock || b.Text == nil || strings.Count(b.Text.Text, "`") != 2 {
		return "", false
	}
	_, rest, _ := strings.Cut(b.Text.Text, "`")
	span, _, _ := strings.Cut(rest, "`")
	if id := core.QuestionID(span); core.ValidID(id) {
		return id, true
	}
	return "", false
}
