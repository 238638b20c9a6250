package pulseroute

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// The EIP-712 domain and primary type of the deposit registration, as the
// specification fixes them.
const (
	EIP712DomainName    = "ServiceInboundReceiver"
	EIP712DomainVersion = "1"
	RegisterPrimaryType = "RegisterDeposit"
	// RegisterAction names the call a client makes after step 1 confirms.
	RegisterAction = "POST /v1/inbound-receiver/register"
)

// RegisterMessage is the RegisterDeposit message a user signs to claim a
// confirmed step-1 deposit: which transaction, who receives on PulseChain,
// which token, and the destination domain (369).
type RegisterMessage struct {
	TxHash            common.Hash
	ToAddress         common.Address
	OutputToken       common.Address
	DestinationDomain uint32
}

// Errors of signature checking, wrapped in *apierr.Error INVALID_PARAMS
// (details.param "signature") so errors.Is still finds them.
var (
	ErrSignatureLength = errors.New("signature must be 65 bytes")
	ErrSignatureValues = errors.New("signature r, s or v out of range (high s is refused)")
	ErrSignerMismatch  = errors.New("signature was not made by the expected address")
)

// domainFields and registerFields are the type lists, in signing order. They
// are functions so the lists cannot be altered by a caller.
func domainFields() []quote.EIP712Field {
	return []quote.EIP712Field{{Name: "name", Type: "string"}, {Name: "version", Type: "string"}, {Name: "chainId", Type: "uint256"}}
}

func registerFields() []quote.EIP712Field {
	return []quote.EIP712Field{
		{Name: "txHash", Type: "bytes32"},
		{Name: "toAddress", Type: "address"},
		{Name: "outputToken", Type: "address"},
		{Name: "destinationDomain", Type: "uint32"},
	}
}

func apiTypes(fs []quote.EIP712Field) []apitypes.Type {
	out := make([]apitypes.Type, len(fs))
	for i, f := range fs {
		out[i] = apitypes.Type{Name: f.Name, Type: f.Type}
	}
	return out
}

// TypedData builds the RegisterDeposit typed data for a source chain.
// Addresses travel as hex strings and numbers as *big.Int, the forms
// apitypes encodes (a common.Address value is refused there).
func TypedData(chainID uint64, msg RegisterMessage) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain":      apiTypes(domainFields()),
			RegisterPrimaryType: apiTypes(registerFields()),
		},
		PrimaryType: RegisterPrimaryType,
		Domain: apitypes.TypedDataDomain{
			Name:    EIP712DomainName,
			Version: EIP712DomainVersion,
			ChainId: (*math.HexOrDecimal256)(new(big.Int).SetUint64(chainID)),
		},
		Message: apitypes.TypedDataMessage{
			"txHash":            msg.TxHash.Hex(),
			"toAddress":         msg.ToAddress.Hex(),
			"outputToken":       msg.OutputToken.Hex(),
			"destinationDomain": new(big.Int).SetUint64(uint64(msg.DestinationDomain)),
		},
	}
}

// Hash is the EIP-712 digest a wallet signs: keccak256("\x19\x01" ‖
// domainSeparator ‖ hashStruct(message)).
func Hash(td apitypes.TypedData) ([]byte, error) {
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return nil, fmt.Errorf("hash %s typed data: %w", td.PrimaryType, err)
	}
	return h, nil
}

func signatureError(cause error) *apierr.Error {
	return apierr.Param("signature", cause.Error()).Wrap(cause)
}

// Recover returns the address that signed msg for chainID. It accepts v as
// wallets give it (27/28) or raw (0/1), and refuses other lengths, other v
// values, zero or out-of-range r and s, and high s (EIP-2), so a signature
// has exactly one accepted form. Contract wallets (EIP-1271) do not recover
// this way.
func Recover(chainID uint64, msg RegisterMessage, sig []byte) (common.Address, error) {
	if len(sig) != crypto.SignatureLength {
		return common.Address{}, signatureError(fmt.Errorf("%w, got %d", ErrSignatureLength, len(sig)))
	}
	v := sig[crypto.RecoveryIDOffset]
	if v >= 27 {
		v -= 27
	}
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:64])
	if !crypto.ValidateSignatureValues(v, r, s, true) {
		return common.Address{}, signatureError(ErrSignatureValues)
	}
	digest, err := Hash(TypedData(chainID, msg))
	if err != nil {
		return common.Address{}, apierr.New(apierr.Internal, "hash registration message").Wrap(err)
	}
	norm := make([]byte, crypto.SignatureLength)
	copy(norm, sig)
	norm[crypto.RecoveryIDOffset] = v
	pub, err := crypto.SigToPub(digest, norm)
	if err != nil {
		return common.Address{}, signatureError(fmt.Errorf("%w: %v", ErrSignatureValues, err))
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// Verify checks that sig over msg for chainID was made by expected.
func Verify(chainID uint64, msg RegisterMessage, sig []byte, expected common.Address) error {
	got, err := Recover(chainID, msg, sig)
	if err != nil {
		return err
	}
	if got != expected {
		return signatureError(fmt.Errorf("%w: recovered %s, expected %s", ErrSignerMismatch, got.Hex(), expected.Hex()))
	}
	return nil
}

// RegisterSpec is afterStep1.eip712 of Shape C for a source chain.
func RegisterSpec(chainID uint64) quote.EIP712Spec {
	return quote.EIP712Spec{
		Domain:      quote.EIP712Domain{Name: EIP712DomainName, Version: EIP712DomainVersion, ChainID: chainID},
		Types:       quote.EIP712Types{RegisterDeposit: registerFields()},
		PrimaryType: RegisterPrimaryType,
	}
}

// Placeholders of the registration body template: the step-1 hash and the
// signature are unknown when the quote is made. Neither is valid hex, so a
// template posted unchanged fails validation; they use no characters JSON
// encoders escape, so clients see them verbatim.
const (
	PlaceholderTxHash    = "{{step1TxHash}}"
	PlaceholderSignature = "{{signature}}"
)

// RegisterBodyTemplate is afterStep1.body for a quote.
func RegisterBodyTemplate(from, to, outputToken common.Address, destinationDomain uint32) quote.RegisterBody {
	return quote.RegisterBody{
		TxHash:            PlaceholderTxHash,
		FromAddress:       from.Hex(),
		ToAddress:         to.Hex(),
		OutputToken:       outputToken.Hex(),
		DestinationDomain: destinationDomain,
		Signature:         PlaceholderSignature,
	}
}
