package address

import (
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
)

// validateBitcoin accepts mainnet P2PKH, P2SH, P2WPKH, P2WSH and P2TR.
// btcutil.DecodeAddress also accepts testnet addresses, raw public keys and
// other witness versions, none of which a swap may pay to, so the decoded
// type and network are checked as well.
func validateBitcoin(addr string) error {
	params := &chaincfg.MainNetParams
	a, err := btcutil.DecodeAddress(addr, params)
	if err != nil {
		return invalid("bitcoin", err.Error())
	}
	if !a.IsForNet(params) {
		return invalid("bitcoin", "not a mainnet address")
	}
	switch a.(type) {
	case *btcutil.AddressPubKeyHash, *btcutil.AddressScriptHash,
		*btcutil.AddressWitnessPubKeyHash, *btcutil.AddressWitnessScriptHash,
		*btcutil.AddressTaproot:
	default:
		return invalid("bitcoin", "unsupported address type")
	}
	// DecodeAddress is lenient about the string form of some types (a raw
	// pubkey re-encodes differently); a canonical address round-trips.
	if a.EncodeAddress() != addr && a.EncodeAddress() != toLowerASCII(addr) {
		return invalid("bitcoin", "not in canonical form")
	}
	return nil
}

// toLowerASCII lower-cases ASCII letters; bech32 addresses may be written
// all upper-case (e.g. in QR codes) and btcutil re-encodes them lower-case.
func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
