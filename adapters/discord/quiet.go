package discord

import "github.com/bwmarrin/discordgo"

// noMentions keeps every message from pinging anyone, whatever the
// (untrusted) text holds.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// noEmbeds keeps Discord from putting a link's preview under a message:
// a link in an agent's text would otherwise show a title and image its
// owner chose ("Approved by Alice") below the card.
const noEmbeds = discordgo.MessageFlagsSuppressEmbeds
