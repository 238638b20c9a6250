package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// node is a JSON value that keeps the order of its object's members, so
// that the document can be rewritten with only its examples changed: the
// order of paths, properties and fields is the order a reader meets them
// in, and encoding/json's maps would sort it away.
type node struct {
	// kind is '{' for an object, '[' for an array, and 0 for anything
	// else, which raw holds as it was written.
	kind  byte
	keys  []string
	vals  []*node // object members, in keys' order
	items []*node // array items
	raw   json.RawMessage
}

// parseNode reads one JSON document.
func parseNode(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the document")
	}
	return n, nil
}

func readNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: '{'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, kt.(string))
				n.vals = append(n.vals, v)
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := &node{kind: '['}
			for dec.More() {
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		raw, err := marshal(t)
		return &node{raw: raw}, err
	}
}

// valueNode is a node of any value encoding/json can marshal, object keys
// in the order the value's encoding has them.
func valueNode(v any) (*node, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	return parseNode(b)
}

// marshal is json.Marshal without HTML escaping, as the document is
// written: descriptions say <account>.near, not \u003caccount\u003e.near.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// get returns an object's member, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// path follows object members from n; nil when one is missing.
func (n *node) path(keys ...string) *node {
	for _, k := range keys {
		n = n.get(k)
	}
	return n
}

// set replaces an object's member, or appends it.
func (n *node) set(key string, v *node) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// del removes an object's member if it is there.
func (n *node) del(key string) {
	for i, k := range n.keys {
		if k == key {
			n.keys = append(n.keys[:i], n.keys[i+1:]...)
			n.vals = append(n.vals[:i], n.vals[i+1:]...)
			return
		}
	}
}

// walk calls fn on n and every node below it, objects with the key path
// that leads to them.
func (n *node) walk(at []string, fn func(at []string, n *node)) {
	fn(at, n)
	for i, k := range n.keys {
		n.vals[i].walk(append(at[:len(at):len(at)], k), fn)
	}
	for _, it := range n.items {
		it.walk(at, fn)
	}
}

// write encodes n indented by two spaces a level, the document's layout.
func (n *node) write(b *strings.Builder, indent string) {
	switch n.kind {
	case '{':
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range n.keys {
			kb, _ := marshal(k)
			b.WriteString(indent + "  ")
			b.Write(kb)
			b.WriteString(": ")
			n.vals[i].write(b, indent+"  ")
			if i < len(n.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case '[':
		if len(n.items) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, it := range n.items {
			b.WriteString(indent + "  ")
			it.write(b, indent+"  ")
			if i < len(n.items)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	default:
		b.Write(n.raw)
	}
}

// encode is the document as it is written to its file.
func (n *node) encode() []byte {
	var b strings.Builder
	n.write(&b, "")
	b.WriteByte('\n')
	return []byte(b.String())
}
