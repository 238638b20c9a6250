// Package jsonenc appends JSON values byte for byte as encoding/json
// writes them, without reflection. The hot paths (quote responses, the
// records every partner quote leaves on disk) build their JSON with it; the
// tests hold it to encoding/json's output.
package jsonenc

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendFloat appends a finite float64 as encoding/json does: %f
// between 1e-6 and 1e21, otherwise %e with a one-digit negative exponent
// written without its leading zero.
func AppendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as encoding/json quotes it with HTML escaping:
// <, > and & as \u003c-style escapes, control characters, invalid UTF-8
// as \ufffd, and U+2028 and U+2029 escaped.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Object appends one JSON object member by member, in call order, as
// encoding/json writes a struct: no spaces, keys given literally (they
// must need no escaping). The zero value is not usable; start with Begin.
type Object struct {
	b     []byte
	first bool
	err   error
}

// Begin starts an object at the end of b.
func Begin(b []byte) Object { return Object{b: append(b, '{'), first: true} }

func (o *Object) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

// String adds a string member.
func (o *Object) String(k, v string) {
	o.key(k)
	o.b = AppendString(o.b, v)
}

// StringOmitEmpty adds a string member unless v is empty (omitempty).
func (o *Object) StringOmitEmpty(k, v string) {
	if v != "" {
		o.String(k, v)
	}
}

// Int adds an integer member.
func (o *Object) Int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

// Uint adds an unsigned integer member.
func (o *Object) Uint(k string, v uint64) {
	o.key(k)
	o.b = strconv.AppendUint(o.b, v, 10)
}

// Time adds a time member as time.Time's MarshalJSON writes it (RFC 3339
// with nanoseconds). Like MarshalJSON it refuses years outside 0–9999,
// which RFC 3339 cannot express; the error is reported by End.
func (o *Object) Time(k string, t time.Time) {
	if y := t.Year(); y < 0 || y > 9999 {
		if o.err == nil {
			o.err = fmt.Errorf("jsonenc: %s: year %d outside [0,9999]", k, y)
		}
		return
	}
	o.key(k)
	o.b = append(o.b, '"')
	o.b = t.AppendFormat(o.b, time.RFC3339Nano)
	o.b = append(o.b, '"')
}

// TimeOmitZero adds a time member unless t is the zero time (omitzero).
func (o *Object) TimeOmitZero(k string, t time.Time) {
	if !t.IsZero() {
		o.Time(k, t)
	}
}

// BeginObject starts a nested object member; EndObject closes it.
func (o *Object) BeginObject(k string) {
	o.key(k)
	o.b = append(o.b, '{')
	o.first = true
}

// EndObject closes the innermost nested object.
func (o *Object) EndObject() {
	o.b = append(o.b, '}')
	o.first = false
}

// End closes the object and returns the buffer, or the first error.
func (o *Object) End() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	return append(o.b, '}'), nil
}

// TrueOmitFalse adds a boolean member that is true, and nothing for false
// (a bool with omitempty).
func (o *Object) TrueOmitFalse(k string, v bool) {
	if v {
		o.key(k)
		o.b = append(o.b, "true"...)
	}
}

// Decimal adds an integer as a decimal string, "0" for nil, as amounts in
// base units are written.
func (o *Object) Decimal(k string, v *big.Int) {
	o.key(k)
	o.b = append(o.b, '"')
	if v == nil {
		o.b = append(o.b, '0')
	} else {
		o.b = v.Append(o.b, 10)
	}
	o.b = append(o.b, '"')
}
