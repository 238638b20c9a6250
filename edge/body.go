package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// decodeBody is the one strict JSON body decoder of the edge, shared by every
// endpoint that takes a body, so all of them refuse the same things the same
// way (specification, Errors):
//
//   - a Content-Type other than application/json (parameters such as charset
//     allowed), an empty body, malformed JSON or data after the object:
//     INVALID_BODY;
//   - a body that is not an object, a field of the wrong type, a number the
//     field cannot hold, a field the endpoint does not know (names match
//     exactly, case included) or a field given twice: VALIDATION_ERROR with
//     details.field naming it (a.b for b inside a);
//   - a string that is not valid UTF-8: INVALID_BODY with details.field.
//
// Missing fields are left at their zero value for the handler to report as
// INVALID_PARAMS, which is a different rule.
func decodeBody(r *Request, v any) *apierr.Error {
	if err := jsonContentType(r); err != nil {
		return err
	}
	return decodeJSON(r.Ctx.PostBody(), v)
}

// jsonContentType checks that the request says, once, that its body is
// application/json. fasthttp keeps the last of several Content-Type lines,
// so the raw headers are counted: text/plain followed by application/json
// is as ambiguous as the other order.
func jsonContentType(r *Request) *apierr.Error {
	ct := string(r.Ctx.Request.Header.ContentType())
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return apierr.New(apierr.InvalidBody, "Content-Type must be application/json").With("contentType", ct)
	}
	if headerLines(r.Ctx.Request.Header.RawHeaders(), "Content-Type") > 1 {
		return apierr.New(apierr.InvalidBody, "Content-Type must be given once")
	}
	return nil
}

// headerLines counts the header lines named name in raw headers as sent.
func headerLines(raw []byte, name string) int {
	n := 0
	for len(raw) > 0 {
		var line []byte
		line, raw, _ = bytes.Cut(raw, []byte("\n"))
		if k, _, ok := bytes.Cut(line, []byte(":")); ok && strings.EqualFold(string(bytes.TrimSpace(k)), name) {
			n++
		}
	}
	return n
}

// jsonSpace is the whitespace JSON allows between tokens (RFC 8259).
const jsonSpace = " \t\n\r"

// decodeJSON applies decodeBody's rules to body, whatever its origin.
func decodeJSON(body []byte, v any) *apierr.Error {
	// JSON's whitespace only: bytes.TrimSpace would also take a form feed,
	// a vertical tab or U+00A0 around the object, which json.Valid refuses.
	trimmed := bytes.Trim(body, jsonSpace)
	if len(trimmed) == 0 {
		return apierr.New(apierr.InvalidBody, "request body is empty; a JSON object is required")
	}
	if !json.Valid(trimmed) {
		return apierr.New(apierr.InvalidBody, "request body is not valid JSON")
	}
	if trimmed[0] != '{' {
		return apierr.New(apierr.ValidationError, "request body must be a JSON object")
	}
	if err := checkShape(trimmed, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	// json.Valid accepted the whole body as one value, so nothing can follow;
	// this guards against a decoder that stops early.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apierr.New(apierr.InvalidBody, "unexpected data after the JSON object")
	}
	return nil
}

// shapeFrame is an object or array being read by checkShape.
type shapeFrame struct {
	object bool
	// t is the Go type its members decode into; nil when anything goes
	// (an interface, a json.Unmarshaler).
	t    reflect.Type
	path string
	seen map[string]bool
	// key is the member whose value comes next, and wantKey whether a key
	// comes next instead.
	key     string
	keyType reflect.Type
	wantKey bool
}

// checkShape reads a valid JSON body token by token against the Go type it
// decodes into and refuses, naming the field by its path (a.b for b inside
// a) in details.field, what encoding/json would let through or report
// poorly:
//
//   - a string holding invalid UTF-8, which JSON text may not contain and
//     which encoding/json would silently replace with U+FFFD (a secret or
//     an id would then be stored other than sent): INVALID_BODY;
//   - a member given twice (encoding/json keeps the last), or a name that
//     matches a field only without regard to case (encoding/json takes
//     "QUOTEID" for quoteId): VALIDATION_ERROR, as for any unknown field;
//   - a value of the wrong JSON type, or a number the field cannot hold
//     (1e400, -1 or 1.5 for an unsigned integer): VALIDATION_ERROR.
//
// It reads iteratively, so nesting costs no stack; json.Valid has already
// bounded its depth.
func checkShape(body []byte, t reflect.Type) *apierr.Error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []*shapeFrame
	var off int64
	root := true
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return apierr.New(apierr.InvalidBody, "request body is not valid JSON").Wrap(err)
		}
		raw := body[off:dec.InputOffset()]
		off = dec.InputOffset()
		var top *shapeFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].wantKey = true
			}
			continue
		}
		if top != nil && top.object && top.wantKey {
			key, _ := tok.(string)
			path := joinPath(top.path, key)
			if !utf8.Valid(raw) {
				return invalidUTF8(path)
			}
			if top.seen[key] {
				return apierr.New(apierr.ValidationError, "field "+path+" is given more than once").With("field", path)
			}
			top.seen[key] = true
			top.key, top.keyType, top.wantKey = key, nil, false
			if top.t != nil {
				switch top.t.Kind() {
				case reflect.Struct:
					ft, ok := jsonField(top.t, key)
					if !ok {
						return apierr.New(apierr.ValidationError, "unknown field "+path).With("field", path)
					}
					top.keyType = ft
				case reflect.Map:
					top.keyType = top.t.Elem()
				}
			}
			continue
		}
		// A value: the root, an array's item or an object's member.
		var want reflect.Type
		path := ""
		switch {
		case root:
			want, root = t, false
		case top.object:
			want, path = top.keyType, joinPath(top.path, top.key)
			top.wantKey = true
		default:
			path = top.path
			if top.t != nil {
				want = top.t.Elem()
			}
		}
		if !utf8.Valid(raw) {
			return invalidUTF8(path)
		}
		want = concrete(want)
		if e := checkValue(tok, want, path); e != nil {
			return e
		}
		if d, ok := tok.(json.Delim); ok {
			f := &shapeFrame{object: d == '{', t: want, path: path}
			if f.object {
				f.seen, f.wantKey = make(map[string]bool), true
			}
			stack = append(stack, f)
		}
	}
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func invalidUTF8(path string) *apierr.Error {
	e := apierr.New(apierr.InvalidBody, "request body is not valid UTF-8")
	if path != "" {
		e = apierr.New(apierr.InvalidBody, "field "+path+" is not valid UTF-8").With("field", path)
	}
	return e
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// concrete is the type a value decodes into, pointers followed; nil when
// checkShape cannot tell (no type, an interface, a json.Unmarshaler).
func concrete(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) {
			return nil
		}
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	return t
}

// checkValue refuses a value of the wrong JSON type for t, or a number t
// cannot hold. A null is always accepted: it leaves the field as it was.
func checkValue(tok json.Token, t reflect.Type, path string) *apierr.Error {
	if t == nil || tok == nil {
		return nil
	}
	var got string
	ok := true
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			got, ok = "object", t.Kind() == reflect.Struct || t.Kind() == reflect.Map
		} else {
			got, ok = "array", t.Kind() == reflect.Slice || t.Kind() == reflect.Array
		}
	case string:
		got, ok = "string", t.Kind() == reflect.String
	case bool:
		got, ok = "boolean", t.Kind() == reflect.Bool
	case json.Number:
		got = "number"
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if _, err := strconv.ParseInt(string(v), 10, t.Bits()); err != nil {
				return numberError(path, "an integer from "+strconv.FormatInt(-1<<(t.Bits()-1), 10)+" to "+strconv.FormatInt(1<<(t.Bits()-1)-1, 10), v)
			}
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			if _, err := strconv.ParseUint(string(v), 10, t.Bits()); err != nil {
				return numberError(path, "a whole number from 0 to "+strconv.FormatUint(1<<t.Bits()-1, 10), v)
			}
		case reflect.Float32, reflect.Float64:
			if _, err := strconv.ParseFloat(string(v), t.Bits()); err != nil {
				return numberError(path, "a finite number", v)
			}
		default:
			ok = false
		}
	}
	if !ok {
		return apierr.New(apierr.ValidationError, "field "+path+" must be a "+jsonKind(t.Kind().String())+", not a JSON "+got).With("field", path)
	}
	return nil
}

func numberError(path, want string, v json.Number) *apierr.Error {
	return apierr.New(apierr.ValidationError, "field "+path+" must be "+want+", not "+string(v)).With("field", path)
}

// jsonFields maps each struct type to its members by JSON name, embedded
// structs' promoted fields included, as encoding/json names them.
var jsonFields sync.Map // reflect.Type → map[string]reflect.Type

func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	m, ok := jsonFields.Load(t)
	if !ok {
		fields := map[string]reflect.Type{}
		collectFields(t, fields)
		m, _ = jsonFields.LoadOrStore(t, fields)
	}
	ft, ok := m.(map[string]reflect.Type)[name]
	return ft, ok
}

func collectFields(t reflect.Type, into map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				collectFields(et, into)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := into[name]; !dup {
			into[name] = f.Type
		}
	}
}

// bodyError maps a decoding error of a syntactically valid body to the
// specification's codes.
func bodyError(err error) *apierr.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return apierr.New(apierr.ValidationError, "request body has the wrong shape").Wrap(err)
		}
		return apierr.New(apierr.ValidationError, "field "+field+" must be a "+jsonKind(te.Type.Kind().String())+", not a JSON "+te.Value).
			With("field", field).Wrap(err)
	}
	const unknown = "json: unknown field "
	if msg := err.Error(); strings.HasPrefix(msg, unknown) {
		field := strings.Trim(strings.TrimPrefix(msg, unknown), `"`)
		return apierr.New(apierr.ValidationError, "unknown field "+field).With("field", field).Wrap(err)
	}
	return apierr.New(apierr.InvalidBody, "request body is not valid JSON").Wrap(err)
}

// jsonKind names a Go kind the way a client knows it.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "number"
	}
	return kind
}
