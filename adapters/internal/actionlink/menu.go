package actionlink

import (
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// menu lists every action of q that the menu link's recipient may take
// (ActRefusal), each as its own link: the bare token, relative to the
// menu's own address. Prefix is where the page is mounted on this server,
// which a proxy that strips the public URL's path
// ("https://corp/askbridge/…") does not show, so the browser resolves
// each link beside the menu it came from.
func (p *Page) menu(q *core.Question, c Claims) view {
	shown := card.New(q, core.MessageRef{Surface: c.Surface, Room: c.To, Kind: core.DeliverPost})
	links, err := p.Signer.Links(q, shown, c.Surface, c.To, "")
	v := view{Title: card.KindTitle(q.Kind), Question: q.Text}
	v.state(q)
	if err != nil {
		p.Log.Error().Err(err).Msg("actionlink: menu not signed")
		v.Failed, v.Message = true, card.RefusalNote(core.Internal("menu", err))
		return v
	}
	d := core.Decider{Surface: c.Surface, ID: c.To}
	for _, l := range links {
		if p.Svc.ActRefusal(q, l.Action.Ref, d) != nil {
			continue
		}
		v.Choices = append(v.Choices, choice{Label: LinkLabel(l.Action.Label), URL: l.URL})
	}
	return v
}

// LinkLabel is label on a link or button that opens the action's page (an
// email's link, an ntfy button, the menu): the chat cards' "Reply to
// answer" names a reply, which nothing reads there, as the answer is
// typed on the page, so it says that instead (card.LabelAnswerOnPage).
func LinkLabel(label string) string { return pageLabel(label, card.LabelAnswerOnPage) }

// pageLabel is label as the link's page says it: card.LabelAnswer is as,
// what the page's link or button does; any other label is as it is.
func pageLabel(label, as string) string {
	if label == card.LabelAnswer {
		return as
	}
	return label
}

// Refusals is what Offered asks of core: who may answer, and what one
// act would be refused with (Service's MayAnswer and ActRefusal).
type Refusals interface {
	MayAnswer(q *core.Question, d core.Decider) bool
	ActRefusal(q *core.Question, r core.Ref, d core.Decider) error
}

// Offered is c with only the actions d may take: without those d may
// answer by but not take (core.Service.ActRefusal: a standing approval
// offered to one only an escalation let in), whose links the page could
// only refuse. One whom no route lets in keeps every link: the page
// tells them so at once, and the door records their attempt
// (adaptertest's unauthorised scenario). The doors that sign a link per
// recipient (email, ntfy) send only these.
func Offered(svc Refusals, q *core.Question, c card.Card, d core.Decider) card.Card {
	if !svc.MayAnswer(q, d) {
		return c
	}
	return c.Only(func(x card.Action) bool { return svc.ActRefusal(q, x.Ref, d) == nil })
}
