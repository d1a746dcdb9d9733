package telegram

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// unreadable is an update decodeUpdate could not read, kept by its id
// alone (handle finds nothing in it to act on), and logged so: the
// poller moves its offset past it and the webhook answers it 200, as
// Telegram would otherwise send it again and again (it redelivers an
// update answered with anything but a 2xx) and hold back the bot's later
// updates meanwhile. ok is false when not even its id can be read.
func (a *Adapter) unreadable(raw []byte, err error) (u incoming, ok bool) {
	var id struct {
		UpdateID int `json:"update_id"`
	}
	ev := a.log.Warn().Str("reason", unreadableWhy(err))
	if raw != nil && json.Unmarshal(raw, &id) == nil {
		u, ok = incoming{Update: tgbotapi.Update{UpdateID: id.UpdateID}}, true
		ev = ev.Int("update", id.UpdateID)
	}
	ev.Msg("telegram: an update could not be read; skipped")
	return u, ok
}

// unreadableWhy says why an update could not be read without quoting
// it: encoding/json's errors quote the update's text (a number it could
// not store, the character it choked on), which may be a person's.
func unreadableWhy(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var big *http.MaxBytesError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("not JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %s is not a %s", typ.Field, typ.Type)
	case errors.As(err, &big):
		return fmt.Sprintf("longer than %d bytes", big.Limit)
	}
	return fmt.Sprintf("%T", err)
}
