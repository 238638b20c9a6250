package pebblestore

import (
	"encoding/json"
	"fmt"
)

// versioned is a record envelope: a JSON object with its encoding version
// in "v" (see the package comment).
type versioned interface{ version() int }

func (r idemRecord) version() int    { return r.V }
func (r webhookRecord) version() int { return r.V }

// decodeV1 decodes a version-1 record of the named kind. A later encoding
// version gets its own case here, migrating as it reads.
func decodeV1[R versioned](b []byte, kind string) (R, error) {
	return decodeVersion[R](b, kind, 1)
}

// decodeVersion decodes a record of the named kind written in encoding
// version want, and refuses any other version.
func decodeVersion[R versioned](b []byte, kind string, want int) (R, error) {
	var rec R
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("pebblestore: decode %s: %w", kind, err)
	}
	if v := rec.version(); v != want {
		return rec, fmt.Errorf("pebblestore: %s record version %d unknown", kind, v)
	}
	return rec, nil
}
