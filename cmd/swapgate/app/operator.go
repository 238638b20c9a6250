package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/adapters/extsigner"
	"github.com/swapgate/swapgate/store"
)

// OperatorConfig is how the transaction manager's account signs: the sealed operator key in the store (`swapgate operator-key
// create`), or an external signer speaking eth_signTransaction (web3signer,
// Clef) at SignerURL for SignerAddress; one of the two, chosen at start.
type OperatorConfig struct {
	// SignerURL is the external signer's JSON-RPC endpoint (http, https,
	// ws, wss URL or an IPC socket's absolute path); empty signs with the
	// sealed key.
	SignerURL string
	// SignerAddress is the account the external signer signs for; required
	// with SignerURL, which must hold it (eth_accounts at start).
	SignerAddress string
}

// CheckSigner checks --signer-url and --signer-address together: both or
// neither, a URL the signer can be dialled at, an address that is one.
// The error names the flag at fault.
func (o OperatorConfig) CheckSigner() (flag string, err error) {
	switch {
	case o.SignerURL == "" && o.SignerAddress == "":
		return "", nil
	case o.SignerURL == "":
		return "signer-address", errors.New("needs --signer-url, the external signer that holds it")
	case o.SignerAddress == "":
		return "signer-address", errors.New("is required with --signer-url: the account the external signer signs for")
	}
	if err := signerURL(o.SignerURL); err != nil {
		return "signer-url", err
	}
	if !common.IsHexAddress(o.SignerAddress) || !strings.HasPrefix(o.SignerAddress, "0x") {
		return "signer-address", fmt.Errorf("must be an EVM address (0x and 40 hexadecimal digits), got %q", o.SignerAddress)
	}
	if common.HexToAddress(o.SignerAddress) == (common.Address{}) {
		return "signer-address", errors.New("must not be the zero address")
	}
	return "", nil
}

// signerURL accepts what go-ethereum's client dials: an absolute http(s)
// or ws(s) URL, or an IPC socket's absolute path (Clef's default).
func signerURL(s string) error {
	if filepath.IsAbs(s) && !strings.Contains(s, "://") {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("must be an absolute http, https, ws or wss URL or an IPC socket's path, got %q", s)
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
		return nil
	}
	return fmt.Errorf("must be an absolute http, https, ws or wss URL or an IPC socket's path, got %q", s)
}

// externalSignerFor is the external signer when --signer-url names one
// (nil, nil otherwise, and the sealed key signs). A sealed key stored for
// another address than --signer-address is a start error naming the flags
// and that address: one account signs, and changing it would strand the
// intents in flight and the funds of the other. The same address (the key
// moved into the signer) is no conflict: the signer signs.
func externalSignerFor(ctx context.Context, o OperatorConfig, keys OperatorKeys) (*extsigner.Signer, error) {
	if o.SignerURL == "" {
		return nil, nil
	}
	want := common.HexToAddress(o.SignerAddress)
	sealed, err := OperatorAddress(ctx, keys)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, err
	case sealed != want:
		return nil, fmt.Errorf("--signer-url, --signer-address: the store holds the sealed operator key of %s, and --signer-address is %s: "+
			"one account signs; start without --signer-url, or give the sealed key's address to a signer that holds it", sealed, want)
	}
	return externalSigner(ctx, o)
}

// externalSigner dials the external signer the configuration names and
// checks that it holds the address (nil, nil without --signer-url). A
// signer that cannot be reached or does not hold the address is a start
// error naming the flags: the manager would otherwise take intents it can
// never sign.
func externalSigner(ctx context.Context, o OperatorConfig) (*extsigner.Signer, error) {
	if o.SignerURL == "" {
		return nil, nil
	}
	s, err := extsigner.Dial(ctx, o.SignerURL, common.HexToAddress(o.SignerAddress))
	if err != nil {
		return nil, fmt.Errorf("--signer-url: %w", err)
	}
	if err := s.Check(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("--signer-url, --signer-address: %w", err)
	}
	return s, nil
}

// OperatorKeys is where the operator's key is kept: the store's TxIntents,
// which seals it with secrets.key as it seals webhook secrets.
type OperatorKeys interface {
	OperatorKey(ctx context.Context, name string) ([]byte, error)
	CreateOperatorKey(ctx context.Context, name string, key []byte) (stored []byte, created bool, err error)
}

// ErrOperatorKeyExists is CreateOperatorKey's refusal: a stored key is
// never replaced, since the account's funds, nonces and intents in flight
// belong to its address.
var ErrOperatorKeyExists = errors.New("an operator key is already stored")

// OperatorAddress is the address of the stored operator key; a store
// without one wraps store.ErrNotFound.
func OperatorAddress(ctx context.Context, keys OperatorKeys) (common.Address, error) {
	raw, err := keys.OperatorKey(ctx, OperatorKeyName)
	if err != nil {
		return common.Address{}, fmt.Errorf("the operator key: %w", err)
	}
	defer clear(raw)
	return addressOfKey(raw)
}

// addressOfKey is the address of a raw secp256k1 private key.
func addressOfKey(raw []byte) (common.Address, error) {
	k, err := crypto.ToECDSA(raw)
	if err != nil {
		return common.Address{}, fmt.Errorf("the stored operator key is not a secp256k1 key: %w", err)
	}
	return crypto.PubkeyToAddress(k.PublicKey), nil
}

// registerOperatorAdmin adds to the admin listener what `swapgate tx` and
// `swapgate operator-key show` read while the server holds the store: the
// intents, and the account the server signs with (the external signer's
// when --signer-url names one, the sealed key's otherwise).
func registerOperatorAdmin(s *admin.Server, intents store.TxIntents, o OperatorConfig) error {
	if err := admin.RegisterTxs(s, intents); err != nil {
		return err
	}
	return admin.RegisterOperatorKey(s, func(ctx context.Context) (admin.OperatorKeyView, error) {
		if o.SignerURL != "" {
			return admin.OperatorKeyView{Address: common.HexToAddress(o.SignerAddress).Hex(), Signer: "external"}, nil
		}
		addr, err := OperatorAddress(ctx, intents)
		if err != nil {
			return admin.OperatorKeyView{}, err
		}
		return admin.OperatorKeyView{Address: addr.Hex(), Signer: "sealed"}, nil
	})
}
