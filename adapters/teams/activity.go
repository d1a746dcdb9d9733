package teams

import "encoding/json"

// The Bot Framework's activity schema, as much of it as askbridge reads
// and writes (field names as in the Bot Connector REST reference).

// Activity is one Bot Framework activity: a message, an invoke, or
// anything else a channel sends.
type Activity struct {
	Type         string               `json:"type"`
	ID           string               `json:"id,omitempty"`
	Name         string               `json:"name,omitempty"`
	Timestamp    string               `json:"timestamp,omitempty"`
	ServiceURL   string               `json:"serviceUrl,omitempty"`
	ChannelID    string               `json:"channelId,omitempty"`
	From         *Account             `json:"from,omitempty"`
	Conversation *ConversationAccount `json:"conversation,omitempty"`
	Recipient    *Account             `json:"recipient,omitempty"`
	ReplyToID    string               `json:"replyToId,omitempty"`
	Text         string               `json:"text,omitempty"`
	TextFormat   string               `json:"textFormat,omitempty"`
	Summary      string               `json:"summary,omitempty"`
	Attachments  []Attachment         `json:"attachments,omitempty"`
	Entities     []Entity             `json:"entities,omitempty"`
	ChannelData  json.RawMessage      `json:"channelData,omitempty"`
	Value        json.RawMessage      `json:"value,omitempty"`
}

// Account is a user or bot: in Teams, ID is the channel's id ("29:…")
// and AADObjectID the person's Microsoft Entra (AAD) object id, which is
// who askbridge knows them as.
type Account struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	AADObjectID string `json:"aadObjectId,omitempty"`
	Role        string `json:"role,omitempty"`
}

// ConversationAccount is where an activity happened. A channel thread's
// id is the channel's id with ";messageid=<root activity id>".
type ConversationAccount struct {
	ID               string `json:"id"`
	ConversationType string `json:"conversationType,omitempty"` // personal, groupChat, channel
	TenantID         string `json:"tenantId,omitempty"`
	IsGroup          bool   `json:"isGroup,omitempty"`
}

// Attachment carries a card.
type Attachment struct {
	ContentType string `json:"contentType"`
	Content     any    `json:"content"`
}

// Entity is an activity's or card's entity; askbridge writes mentions.
type Entity struct {
	Type      string   `json:"type"`
	Text      string   `json:"text,omitempty"`
	Mentioned *Account `json:"mentioned,omitempty"`
}

// ContentTypeCard is an Adaptive Card attachment's content type.
const ContentTypeCard = "application/vnd.microsoft.card.adaptive"

// ConversationParameters create a conversation: a new thread in a
// channel (ChannelData names the channel, Activity is its first post) or
// a personal chat with one member.
type ConversationParameters struct {
	IsGroup     bool            `json:"isGroup"`
	Bot         *Account        `json:"bot,omitempty"`
	Members     []Account       `json:"members,omitempty"`
	TenantID    string          `json:"tenantId,omitempty"`
	Activity    *Activity       `json:"activity,omitempty"`
	ChannelData json.RawMessage `json:"channelData,omitempty"`
}

// ConversationResourceResponse is what creating a conversation returns.
type ConversationResourceResponse struct {
	ID         string `json:"id"`
	ActivityID string `json:"activityId,omitempty"`
	ServiceURL string `json:"serviceUrl,omitempty"`
}

// ResourceResponse is what sending or updating an activity returns.
type ResourceResponse struct {
	ID string `json:"id"`
}

// InvokeValue is an adaptiveCard/action invoke's value.
type InvokeValue struct {
	Action struct {
		Type string          `json:"type"`
		ID   string          `json:"id,omitempty"`
		Verb string          `json:"verb"`
		Data json.RawMessage `json:"data"`
	} `json:"action"`
	Trigger string `json:"trigger,omitempty"`
}

// InvokeResponse is the HTTP body that answers an adaptiveCard/action
// invoke: a message shown to the clicker alone.
type InvokeResponse struct {
	StatusCode int    `json:"statusCode"`
	Type       string `json:"type"`
	Value      any    `json:"value"`
}

// InvokeMessage is InvokeResponse's Type for a text shown to the clicker.
const InvokeMessage = "application/vnd.microsoft.activity.message"
