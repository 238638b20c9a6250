// Package api holds Swapgate's contract as a document: the OpenAPI 3.1
// description of the whole /v1 interface (openapi.json: every endpoint with
// its parameters, bodies and answers, every error code with its status, the
// webhooks and their signature), and the assets of the rendered reference
// the edge serves at /docs. The document is embedded so that the binary
// serves exactly the contract its tests were held to: every response the
// end-to-end tests receive is validated against it (internal/apitest), and a
// test fails when the edge registers an endpoint the document lacks.
//
// The package is a leaf: it only embeds files, so the edge can import it
// without taking on the validation library, which only tests use.
package api

import (
	"embed"
	"io/fs"
)

//go:embed openapi.json docs/redoc.standalone.js docs/redoc.standalone.js.LICENSE.txt docs/LICENSE docs/docs.js docs/docs.css
var files embed.FS

// Document returns the OpenAPI document as JSON. Each call returns a fresh
// copy, so that no caller can change what another one is served.
func Document() []byte {
	b, err := files.ReadFile("openapi.json")
	if err != nil {
		// The file is embedded at build time; a missing one cannot build.
		panic("api: the embedded openapi.json is missing: " + err.Error())
	}
	return b
}

// Assets returns the files of the rendered reference the edge serves under
// /docs/: the vendored Redoc bundle with its licenses, and the page's own
// script and stylesheet (see docs/README.md for the bundle's package, version and update).
func Assets() fs.FS {
	sub, err := fs.Sub(files, "docs")
	if err != nil {
		panic("api: the embedded docs directory is missing: " + err.Error())
	}
	return sub
}
