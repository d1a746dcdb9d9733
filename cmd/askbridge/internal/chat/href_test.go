package chat

import "net/url"

// resolveHref is href as a browser resolves it on the page at page: the
// ntfy menu's links are relative to the menu's own address, so they keep
// whatever path the public URL has.
func resolveHref(page, href string) string {
	base, err := url.Parse(page)
	if err != nil {
		return ""
	}
	ref, err := url.Parse(href)
	if err != nil {
		return ""
	}
	return base.ResolveReference(ref).String()
}
