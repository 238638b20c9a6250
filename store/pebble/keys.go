package pebblestore

// Key prefixes implemented in this package. The full layout, including the
// prefixes reserved for later record families, is in the package comment.
const (
	prefixPartner    = "partner/"
	prefixPartnerKey = "partnerkey/"
)

var keySchema = []byte("meta/schema")

// partnerKey returns the key of a partner record.
func partnerKey(id string) []byte {
	return append([]byte(prefixPartner), id...)
}

// partnerDigestKey returns the index key mapping an API key digest to its
// partner.
func partnerDigestKey(d [32]byte) []byte {
	return append([]byte(prefixPartnerKey), d[:]...)
}

// prefixUpperBound returns the smallest key greater than every key that
// starts with prefix, for use as an iterator's exclusive upper bound. Every
// prefix here ends in '/', so incrementing the last byte is enough.
func prefixUpperBound(prefix string) []byte {
	b := []byte(prefix)
	b[len(b)-1]++
	return b
}
