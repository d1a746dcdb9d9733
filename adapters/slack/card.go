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
