package oneclick

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/mr-tron/base58"
)

// rippleAlphabet is the XRP Ledger's base58 alphabet.
var rippleAlphabet = base58.NewAlphabet("rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz")

// chainAddress spells the 32 bytes of sum as an account of the intents
// blockchain named, in the form its wallets use, so that a deposit address
// passes the checks the adapter makes of 1Click's: a P2WSH address on
// Bitcoin and Litecoin, base58check of the chain's version byte and 20
// bytes on Tron, XRP, Dogecoin, Dash, Zcash (transparent) and Bitcoin Cash
// (legacy), a raw workchain-0 account on TON, a StrKey account on Stellar,
// a Shelley enterprise address on Cardano, bech32m on Aleo, an implicit
// account on NEAR, a 32-byte object id on Sui (and Aptos, Starknet),
// base58 on Solana and a 20-byte hex account on EVM chains.
func chainAddress(blockchain string, sum []byte) string {
	switch blockchain {
	case "sol":
		return base58.Encode(sum)
	case "near":
		return hex.EncodeToString(sum)
	case "btc":
		return segwit("bc", sum)
	case "ltc":
		return segwit("ltc", sum)
	case "tron":
		return base58Check(base58.BTCAlphabet, []byte{0x41}, sum[:20])
	case "xrp":
		return base58Check(rippleAlphabet, []byte{0x00}, sum[:20])
	case "doge":
		return base58Check(base58.BTCAlphabet, []byte{0x1E}, sum[:20])
	case "dash":
		return base58Check(base58.BTCAlphabet, []byte{0x4C}, sum[:20])
	case "zec":
		return base58Check(base58.BTCAlphabet, []byte{0x1C, 0xB8}, sum[:20])
	case "bch":
		return base58Check(base58.BTCAlphabet, []byte{0x00}, sum[:20])
	case "ton":
		return "0:" + hex.EncodeToString(sum)
	case "stellar":
		return strKey(sum)
	case "cardano":
		// Header 0x61: an enterprise address (kind 6) on mainnet (1).
		return bech32Of("addr", bech32.Encode, append([]byte{0x61}, sum[:28]...))
	case "aleo":
		return bech32Of("aleo", bech32.EncodeM, sum)
	case "sui", "aptos", "starknet":
		return "0x" + hex.EncodeToString(sum)
	}
	return "0x" + hex.EncodeToString(sum[:20])
}

// segwit is a version 0 witness address of a 32-byte program (P2WSH).
func segwit(hrp string, program []byte) string {
	data, err := bech32.ConvertBits(program, 8, 5, true)
	if err != nil {
		panic(err) // 8-bit to 5-bit with padding does not fail
	}
	addr, err := bech32.Encode(hrp, append([]byte{0}, data...))
	if err != nil {
		panic(err)
	}
	return addr
}

// bech32Of encodes payload under hrp with encode (bech32 or bech32m).
func bech32Of(hrp string, encode func(string, []byte) (string, error), payload []byte) string {
	data, err := bech32.ConvertBits(payload, 8, 5, true)
	if err != nil {
		panic(err)
	}
	addr, err := encode(hrp, data)
	if err != nil {
		panic(err)
	}
	return addr
}

// base58Check is version, payload and the first four bytes of their
// double SHA-256, in alphabet.
func base58Check(alphabet *base58.Alphabet, version, payload []byte) string {
	b := append(append([]byte{}, version...), payload...)
	first := sha256.Sum256(b)
	check := sha256.Sum256(first[:])
	return base58.EncodeAlphabet(append(b, check[:4]...), alphabet)
}

// strKey is a Stellar account id (G…) of a 32-byte key: base32 of the
// version byte, the key and its CRC-16/XMODEM, little endian.
func strKey(key []byte) string {
	b := append([]byte{6 << 3}, key[:32]...)
	crc := crc16XModem(b)
	b = append(b, byte(crc), byte(crc>>8))
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
}

func crc16XModem(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for i := 0; i < 8; i++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
