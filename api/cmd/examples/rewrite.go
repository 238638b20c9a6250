package main

import (
	"fmt"
	"strconv"
)

// examplesRef is where the document keeps its examples; the media types of
// answers, request bodies and webhooks refer to them by name.
const examplesRef = "#/components/examples/"

// rewrite replaces every example of the document with examples: it drops
// the examples of every media type and the components' examples, then
// files each captured exchange under components.examples and refers to it
// from the answer of its operation and status (a refusal: from the shared
// response of its status), from the operation's request body, or from its
// webhook. Nothing else of the document changes.
func rewrite(original []byte, examples []example) ([]byte, error) {
	root, err := parseNode(original)
	if err != nil {
		return nil, fmt.Errorf("read the document: %w", err)
	}
	root.walk(nil, func(_ []string, n *node) {
		if n.kind == '{' && n.get("schema") != nil {
			n.del("examples")
		}
	})
	components := root.get("components")
	if components == nil {
		return nil, fmt.Errorf("the document has no components")
	}
	all := &node{kind: '{'}
	for _, e := range examples {
		var media *node
		where := ""
		switch {
		case e.event != "":
			where = "webhook " + e.event
			media = root.path("webhooks", e.event, "post", "requestBody", "content", "application/json")
		case e.errorStatus:
			where = fmt.Sprintf("response Error%d", e.status)
			media = components.path("responses", fmt.Sprintf("Error%d", e.status), "content", "application/json")
		default:
			where = fmt.Sprintf("%s %s %d", e.method, e.path, e.status)
			media = root.path("paths", e.path, e.method, "responses", strconv.Itoa(e.status), "content", "application/json")
		}
		if media == nil {
			return nil, fmt.Errorf("example %s: the document has no %s", e.name, where)
		}
		if err := file(all, media, e.name, e.summary, e.line, e.response); err != nil {
			return nil, err
		}
		if e.event == "" && !e.errorStatus && e.request != nil {
			body := root.path("paths", e.path, e.method, "requestBody", "content", "application/json")
			if body == nil {
				return nil, fmt.Errorf("example %s: %s %s has no JSON request body", e.name, e.method, e.path)
			}
			req, err := valueNode(e.request)
			if err != nil {
				return nil, fmt.Errorf("example %s: %w", e.name, err)
			}
			if err := file(all, body, e.name+"-request", e.summary, e.line, req); err != nil {
				return nil, err
			}
		}
	}
	components.set("examples", all)
	return root.encode(), nil
}

// file adds the example name to the components' examples and refers to it
// from media.
func file(all, media *node, name, summary, line string, value *node) error {
	if all.get(name) != nil {
		return fmt.Errorf("two examples are named %s", name)
	}
	ex := &node{kind: '{'}
	s, err := valueNode(summary)
	if err != nil {
		return err
	}
	ex.set("summary", s)
	if line != "" {
		d, err := valueNode("Captured from the sandbox: `" + line + "`.")
		if err != nil {
			return err
		}
		ex.set("description", d)
	}
	ex.set("value", value)
	all.set(name, ex)
	refs := media.get("examples")
	if refs == nil {
		refs = &node{kind: '{'}
		media.set("examples", refs)
	}
	ref, err := valueNode(map[string]string{"$ref": examplesRef + name})
	if err != nil {
		return err
	}
	refs.set(name, ref)
	return nil
}
