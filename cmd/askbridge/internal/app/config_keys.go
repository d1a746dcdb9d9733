package app

// Where the file's unknown keys stand. The decoder says in which Go type
// it found no field for a key ("line 3: field foo not found in type
// app.RouteFile"), which tells whoever wrote the file neither which route
// nor which of its rooms; so the document is walked again beside the types
// it decodes into, and each such error is named by the YAML path of the
// mapping that holds the key (routes.deploy.rooms[1]).

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// keyPaths holds, under the decoder's words for each unknown key, the
// YAML paths of the mappings holding one, in the order the decoder meets
// them: a key written once may be met more than once (a flow mapping
// holds several on one line, an anchor is used twice), and its errors
// are then the same words, told apart by their order alone.
type keyPaths map[string][]string

// unknownKeyPaths walks raw's first document as parseFile decodes it
// into a File. A document that does not parse gives none.
func unknownKeyPaths(raw []byte) keyPaths {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&doc); err != nil {
		return keyPaths{}
	}
	w := keyWalk{at: keyPaths{}, expanding: map[*yaml.Node]bool{}}
	w.walk(&doc, reflect.TypeFor[File](), "")
	return w.at
}

// take returns the path of the next mapping the decoder's error e is
// about, and false when the walk found none (so the error says no path
// rather than a wrong one).
func (p keyPaths) take(e string) (string, bool) {
	paths := p[e]
	if len(paths) == 0 {
		return "", false
	}
	p[e] = paths[1:]
	return paths[0], true
}

// keyWalk goes through a document in the decoder's order.
type keyWalk struct {
	at keyPaths
	// expanding are the aliases being walked: one inside its own anchor,
	// which the decoder refuses, is not walked again.
	expanding map[*yaml.Node]bool
}

var yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()

// walk walks n, decoded into a value of type t, at path ("" for the
// top level).
func (w *keyWalk) walk(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(yamlUnmarshaler) {
		return // it reads the node itself: the decoder checks no keys in it
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 1 {
			w.walk(n.Content[0], t, path)
		}
	case yaml.AliasNode:
		if !w.expanding[n] {
			w.expanding[n] = true
			w.walk(n.Alias, t, path)
			delete(w.expanding, n)
		}
	case yaml.SequenceNode:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range n.Content {
				w.walk(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	case yaml.MappingNode:
		if t.Kind() == reflect.Map || t.Kind() == reflect.Struct {
			w.mapping(n, t, path)
		}
	}
}

// mapping walks the keys of n, a mapping decoded into t (a map or a
// struct), and then those it merges ("<<"), after its own as the decoder
// takes them. One that holds a key twice the decoder refuses without
// going into it, and nor does the walk: it goes only where the decoder
// went, so it never expands more aliases than the decoder allowed.
func (w *keyWalk) mapping(n *yaml.Node, t reflect.Type, path string) {
	for i := 0; i < len(n.Content); i += 2 {
		for j := i + 2; j < len(n.Content); j += 2 {
			if n.Content[i].Kind == n.Content[j].Kind && n.Content[i].Value == n.Content[j].Value {
				return
			}
		}
	}
	var fields map[string]reflect.Type
	var other reflect.Type // what any key of a map decodes into
	if t.Kind() == reflect.Struct {
		fields = yamlFields(t)
	} else {
		other = t.Elem()
	}
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!" || k.ShortTag() == "!!merge") {
			merged = append(merged, v)
			continue
		}
		at := k.Value
		if path != "" {
			at = path + "." + k.Value
		}
		if ft, ok := fields[k.Value]; ok {
			w.walk(v, ft, at)
		} else if other != nil {
			w.walk(v, other, at)
		} else {
			e := fmt.Sprintf("line %d: field %s not found in type %s", k.Line, k.Value, t)
			w.at[e] = append(w.at[e], path)
		}
	}
	for _, m := range merged {
		if m.Kind == yaml.SequenceNode { // a list of mappings to merge
			for _, e := range m.Content {
				w.walk(e, t, path)
			}
			continue
		}
		w.walk(m, t, path)
	}
}

// yamlFields are the keys the decoder reads into struct t, each with the
// type it decodes into. The file's types inline nothing (",inline"): a
// key of one that did would be placed nowhere, never wrongly.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case f.PkgPath != "" || name == "-": // unexported, or left out
		case name == "":
			fields[strings.ToLower(f.Name)] = f.Type
		default:
			fields[name] = f.Type
		}
	}
	return fields
}
