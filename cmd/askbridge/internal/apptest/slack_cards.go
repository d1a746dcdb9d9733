package apptest

import (
	"encoding/json"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	goslack "github.com/slack-go/slack"
)

// SlackCardOf reads which question a fake message is the card of, with
// the adapter's own decoder.
func SlackCardOf(m slackfake.Message) (core.QuestionID, bool) {
	if m.BotID == "" || m.ThreadTS != "" || len(m.Blocks) == 0 {
		return "", false
	}
	var blocks goslack.Blocks
	if json.Unmarshal(m.Blocks, &blocks) != nil {
		return "", false
	}
	return slack.QuestionOfCard(blocks)
}

func toCard(m slackfake.Message) adaptertest.Card {
	c := adaptertest.Card{Room: m.Channel, ID: m.TS, Text: m.PlainText()}
	for _, b := range m.Buttons() {
		c.Buttons = append(c.Buttons, adaptertest.Button{Label: b.Text, Value: b.Value})
	}
	return c
}
