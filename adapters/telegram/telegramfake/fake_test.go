package telegramfake

import (
	"errors"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		"<b>a</b> &lt;&amp;&gt; &quot;&#39;&#x41;": `a <&> "'A`,
		`<a href="tg://user?id=1">x</a>`:           "x",
		"line\nbreak":                              "line\nbreak",
	} {
		if got, err := PlainText(in); err != nil || got != want {
			t.Errorf("PlainText(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a < b", "a > b", "<b>open", "<b><i>x</b></i>", "<script>x</script>", "&nbsp;", "& x", "<a>x</a>"} {
		if _, err := PlainText(bad); err == nil || !strings.Contains(err.Error(), "can't parse entities") {
			t.Errorf("PlainText(%q) accepted: %v", bad, err)
		}
	}
}

// TestFakeBehavesLikeTelegram drives the fake with the real client.
func TestFakeBehavesLikeTelegram(t *testing.T) {
	s := Start(t, "1:tok")
	bot, err := tgbotapi.NewBotAPIWithAPIEndpoint("1:tok", s.Endpoint())
	if err != nil || bot.Self.ID != Bot.ID {
		t.Fatalf("getMe: %+v %v", bot, err)
	}
	if _, err := tgbotapi.NewBotAPIWithAPIEndpoint("1:wrong", s.Endpoint()); err == nil {
		t.Fatal("a wrong token was accepted")
	}
	m := tgbotapi.NewMessage(-100, "<b>card</b>")
	m.ParseMode = tgbotapi.ModeHTML
	m.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("x", strings.Repeat("d", 65))))
	if _, err := bot.Send(m); err == nil || !strings.Contains(err.Error(), "BUTTON_DATA_INVALID") {
		t.Fatalf("65-byte callback_data: %v", err)
	}
	m.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("x", "data")))
	sent, err := bot.Send(m)
	if err != nil || sent.Text != "card" {
		t.Fatalf("send: %+v %v", sent, err)
	}
	long := tgbotapi.NewMessage(-100, strings.Repeat("𝄞", 2049)) // 4098 UTF-16 units
	if _, err := bot.Send(long); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("a 4098-unit text: %v", err)
	}
	e := tgbotapi.NewEditMessageText(-100, sent.MessageID, "<b>card</b>")
	e.ParseMode = tgbotapi.ModeHTML
	e.ReplyMarkup = &tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{{tgbotapi.NewInlineKeyboardButtonData("x", "data")}}}
	if _, err := bot.Send(e); err == nil || !strings.Contains(err.Error(), "message is not modified") {
		t.Fatalf("identical edit: %v", err)
	}
	e.ReplyMarkup = nil // an edit without a keyboard removes it
	if _, err := bot.Send(e); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Message(-100, sent.MessageID); got.Keyboard != nil || got.Edits != 1 || !got.Keyboarded {
		t.Fatalf("after the edit: %+v", got)
	}
	// A callback query is answered once.
	u, qid, err := s.CallbackUpdate(tgbotapi.User{ID: 5, FirstName: "A"}, -100, sent.MessageID, "data")
	if err != nil {
		t.Fatal(err)
	}
	if status, err := s.Deliver(u); status != 0 || err != nil {
		t.Fatalf("without a webhook an update is queued: %d %v", status, err)
	}
	ups, err := bot.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil || len(ups) != 1 || ups[0].CallbackQuery == nil || ups[0].CallbackQuery.Data != "data" || ups[0].CallbackQuery.Message.Text != "card" {
		t.Fatalf("getUpdates: %+v %v", ups, err)
	}
	if _, err := bot.Request(tgbotapi.NewCallback(qid, "ok")); err != nil {
		t.Fatal(err)
	}
	if _, err := bot.Request(tgbotapi.NewCallback(qid, "again")); err == nil {
		t.Fatal("a second answer to one callback query was accepted")
	}
	if txt, err := s.CallbackAnswer(qid, time.Second); err != nil || txt != "ok" {
		t.Fatalf("answer %q %v", txt, err)
	}
	// An offset past an update confirms it.
	if ups, err := bot.GetUpdates(tgbotapi.UpdateConfig{Offset: ups[0].UpdateID + 1, Timeout: 1}); err != nil || len(ups) != 0 || s.Pending() != 0 {
		t.Fatalf("after confirming: %+v %v, %d pending", ups, err, s.Pending())
	}
	// A second getUpdates ends the one in flight with 409.
	first := make(chan error, 1)
	go func() { _, err := bot.GetUpdates(tgbotapi.UpdateConfig{Timeout: 5}); first <- err }()
	if !s.Wait(5*time.Second, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.polling != nil }) {
		t.Fatal("the first poll never arrived")
	}
	go bot.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err := <-first; err == nil || !strings.Contains(err.Error(), "Conflict") {
		t.Fatalf("the older poll: %v", err)
	}
}

// TestLimitRefusesAsTelegramDoes: once limited, the fake answers 429
// with retry_after to a second message into a chat within limitGap and
// to a thirty-first message within a second, and counts them; other
// chats and messages within the limits go through. The clock is the
// fake's own, moved by hand.
func TestLimitRefusesAsTelegramDoes(t *testing.T) {
	s := Start(t, "1:tok")
	now := time.Now()
	s.now = func() time.Time { return now }
	s.Limit()
	bot, err := tgbotapi.NewBotAPIWithAPIEndpoint("1:tok", s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	send := func(chat int64) error { _, err := bot.Send(tgbotapi.NewMessage(chat, "x")); return err }
	if err := send(1); err != nil {
		t.Fatalf("first message: %v", err)
	}
	var tooMany *tgbotapi.Error
	if err := send(1); !errors.As(err, &tooMany) || tooMany.Code != 429 || tooMany.RetryAfter != 1 {
		t.Fatalf("second message into the chat at once: %v", err)
	}
	for chat := int64(2); chat <= 30; chat++ {
		if err := send(chat); err != nil {
			t.Fatalf("message %d of the second, into chat %d: %v", chat, chat, err)
		}
	}
	if err := send(31); !errors.As(err, &tooMany) || tooMany.Code != 429 {
		t.Fatalf("the 31st message of the second: %v", err)
	}
	now = now.Add(time.Second)
	if err := send(1); err != nil {
		t.Fatalf("the chat's next message a second later: %v", err)
	}
	if n, sent := s.TooMany(), len(s.Sent()); n != 2 || sent != 31 {
		t.Fatalf("%d refused and %d accepted; want 2 and 31", n, sent)
	}
}
