package cluster

import (
	"encoding/binary"
	"errors"
)

// A request frame is the correlation id (8 bytes, big-endian), then the
// grain's kind, its identity and the method, each as a length (2 bytes)
// and its bytes, then the body. A reply frame is the
// correlation id, a status byte, then the body (the answer, or an error's
// text). Bodies are the grains' own encodings.

const (
	statusOK byte = iota
	statusError
	statusStale
)

type frame struct {
	corr   uint64
	status byte
	body   []byte
}

var errShortFrame = errors.New("cluster: short frame")

type request struct {
	corr                   uint64
	kind, identity, method string
	body                   []byte
}

func encodeRequest(corr uint64, kind, identity, method string, body []byte) []byte {
	b := make([]byte, 0, 14+len(kind)+len(identity)+len(method)+len(body))
	b = binary.BigEndian.AppendUint64(b, corr)
	for _, s := range []string{kind, identity, method} {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
	}
	return append(b, body...)
}

func decodeRequest(b []byte) (request, error) {
	if len(b) < 8 {
		return request{}, errShortFrame
	}
	r := request{corr: binary.BigEndian.Uint64(b)}
	b = b[8:]
	for _, s := range []*string{&r.kind, &r.identity, &r.method} {
		if len(b) < 2 {
			return request{}, errShortFrame
		}
		l := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+l {
			return request{}, errShortFrame
		}
		*s, b = string(b[2:2+l]), b[2+l:]
	}
	r.body = b
	return r, nil
}

func encodeReply(corr uint64, status byte, body []byte) []byte {
	b := make([]byte, 0, 9+len(body))
	b = binary.BigEndian.AppendUint64(b, corr)
	b = append(b, status)
	return append(b, body...)
}

func decodeReply(b []byte) (frame, error) {
	if len(b) < 9 {
		return frame{}, errShortFrame
	}
	return frame{corr: binary.BigEndian.Uint64(b), status: b[8], body: b[9:]}, nil
}
