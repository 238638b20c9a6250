package pulseroute

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// The types of Shapes B and C are declared in package quote, which renders
// every response shape; this file builds them from the provider's figures
// and refuses figures that contradict each other, so that no shape leaves
// the provider inconsistent.

// Fixed values of Shape C: its type, and the type of each of its steps.
const (
	ShapeCType       = "multi-step"
	StepTypeSwap     = "aggregator"
	StepTypeAutomate = "pulseroute-automatic"
)

// DirectInput is what NewDirectQuote needs. Fee is the service fee taken
// from FromAmount (in source-token units) at FeeBps; what is left is
// bridged. BridgeGasEstimate is the quoteGasPayment value sent as msg.value.
type DirectInput struct {
	ID                string
	Tool              string
	FromChainID       uint64
	ToChainID         uint64
	FromToken         quote.TokenRef
	ToToken           quote.TokenRef
	FromAmount        *big.Int
	Fee               *big.Int
	FeeBps            int
	DexFeeBps         int
	EstimatedOutput   *big.Int
	MinOutput         *big.Int
	BridgeGasEstimate *big.Int
	EstimatedDuration int
	SenderContract    common.Address
	Tx                quote.TxRequest
}

// ErrInconsistentQuote reports builder inputs that contradict each other.
var ErrInconsistentQuote = errors.New("inconsistent quote inputs")

// namedAmount pairs an input amount with its JSON name for error messages.
type namedAmount struct {
	name string
	v    *big.Int
}

// nonNegative checks amounts in order, so the error names the first bad one.
func nonNegative(fields ...namedAmount) error {
	for _, f := range fields {
		if f.v == nil || f.v.Sign() < 0 {
			return fmt.Errorf("%w: %s is missing or negative", ErrInconsistentQuote, f.name)
		}
	}
	return nil
}

// FeePercentage renders basis points as a percentage with two decimals
// ("0.30" for 30 bps), exact, without floating point.
func FeePercentage(bps int) string {
	sign := ""
	if bps < 0 {
		sign, bps = "-", -bps
	}
	return fmt.Sprintf("%s%d.%02d", sign, bps/100, bps%100)
}

func hexValue(v *big.Int) string {
	if v == nil {
		return "0x0"
	}
	return hexutil.EncodeBig(v)
}

// NewDirectQuote builds Shape B. It checks that the inputs agree: fee
// within fromAmount, minOutput within estimatedOutput, the transaction on
// the source chain and addressed to the sender contract.
func NewDirectQuote(in DirectInput) (quote.DirectQuote, error) {
	if err := nonNegative(
		namedAmount{"fromAmount", in.FromAmount}, namedAmount{"fee", in.Fee},
		namedAmount{"estimatedOutput", in.EstimatedOutput}, namedAmount{"minOutput", in.MinOutput},
		namedAmount{"bridgeGasEstimate", in.BridgeGasEstimate},
	); err != nil {
		return quote.DirectQuote{}, err
	}
	if in.Fee.Cmp(in.FromAmount) > 0 {
		return quote.DirectQuote{}, fmt.Errorf("%w: fee %s exceeds fromAmount %s", ErrInconsistentQuote, in.Fee, in.FromAmount)
	}
	if in.MinOutput.Cmp(in.EstimatedOutput) > 0 {
		return quote.DirectQuote{}, fmt.Errorf("%w: minOutput %s exceeds estimatedOutput %s", ErrInconsistentQuote, in.MinOutput, in.EstimatedOutput)
	}
	if in.Tx.ChainID != in.FromChainID {
		return quote.DirectQuote{}, fmt.Errorf("%w: transaction on chain %d, quote from chain %d", ErrInconsistentQuote, in.Tx.ChainID, in.FromChainID)
	}
	if !strings.EqualFold(in.Tx.To, in.SenderContract.Hex()) {
		return quote.DirectQuote{}, fmt.Errorf("%w: transaction to %s, sender contract %s", ErrInconsistentQuote, in.Tx.To, in.SenderContract.Hex())
	}
	return quote.DirectQuote{
		ID:                in.ID,
		Provider:          registry.ProviderPulseroute,
		Tool:              in.Tool,
		FromChainID:       in.FromChainID,
		ToChainID:         in.ToChainID,
		FromToken:         in.FromToken,
		ToToken:           in.ToToken,
		FromAmount:        in.FromAmount.String(),
		Fee:               in.Fee.String(),
		FeePercentage:     FeePercentage(in.FeeBps),
		BridgeAmount:      new(big.Int).Sub(in.FromAmount, in.Fee).String(),
		EstimatedOutput:   in.EstimatedOutput.String(),
		MinOutput:         in.MinOutput.String(),
		BridgeGasEstimate: in.BridgeGasEstimate.String(),
		EstimatedDuration: in.EstimatedDuration,
		SenderContract:    in.SenderContract.Hex(),
		TransactionRequest: quote.DirectTx{
			To:       in.SenderContract.Hex(),
			Data:     hexutil.Encode(in.Tx.Data),
			Value:    hexValue(in.Tx.Value),
			ChainID:  in.Tx.ChainID,
			GasLimit: hexutil.EncodeUint64(in.Tx.GasLimit),
		},
		FeeBreakdown: quote.FeeBreakdown{
			TotalFeeBps:   in.FeeBps + in.DexFeeBps,
			ServiceFeeBps: in.FeeBps,
			DexFeeBps:     in.DexFeeBps,
			MessagingFee:  in.BridgeGasEstimate.String(),
		},
	}, nil
}

// MultiStepInput is what NewMultiStepQuote needs. Step1Tx is the
// aggregator swap on the source chain that delivers USDC to
// InboundReceiver; ApprovalAddress is its ERC-20 spender ("" for a native
// source token). The intermediate token is the source chain's USDC that
// step 1 produces and step 2 bridges, so IntermediateChainID is normally
// the source chain.
type MultiStepInput struct {
	ID                  string
	FromChainID         uint64
	FromToken           quote.TokenRef
	ToToken             quote.TokenRef
	FromAddress         common.Address
	ToAddress           common.Address
	IntermediateChainID uint64
	IntermediateToken   common.Address
	InboundReceiver     common.Address
	ApprovalAddress     string
	FromAmount          *big.Int
	ToAmount            *big.Int
	ToAmountMin         *big.Int
	ExecutionDuration   int
	Step1Tx             quote.TxRequest
	// Step1Tool names the venue of step 1 in its description ("" names
	// none).
	Step1Tool string
}

// FormatUnits renders base units as an exact decimal number of whole
// tokens, trimming trailing zeros ("1.5" for 1500000 at 6 decimals).
func FormatUnits(amount *big.Int, decimals uint8) string {
	if amount == nil {
		return "0"
	}
	s := new(big.Int).Abs(amount).String()
	sign := ""
	if amount.Sign() < 0 {
		sign = "-"
	}
	d := int(decimals)
	if d == 0 {
		return sign + s
	}
	if len(s) <= d {
		s = strings.Repeat("0", d-len(s)+1) + s
	}
	whole, frac := s[:len(s)-d], strings.TrimRight(s[len(s)-d:], "0")
	if frac == "" {
		return sign + whole
	}
	return sign + whole + "." + frac
}

// NewMultiStepQuote builds Shape C: two steps, one user signature, the
// registration to post after step 1, and the fallback of step 3.
func NewMultiStepQuote(in MultiStepInput) (quote.MultiStepQuote, error) {
	if err := nonNegative(
		namedAmount{"fromAmount", in.FromAmount}, namedAmount{"toAmount", in.ToAmount},
		namedAmount{"toAmountMin", in.ToAmountMin},
	); err != nil {
		return quote.MultiStepQuote{}, err
	}
	if in.ToAmountMin.Cmp(in.ToAmount) > 0 {
		return quote.MultiStepQuote{}, fmt.Errorf("%w: toAmountMin %s exceeds toAmount %s", ErrInconsistentQuote, in.ToAmountMin, in.ToAmount)
	}
	if in.Step1Tx.ChainID != in.FromChainID {
		return quote.MultiStepQuote{}, fmt.Errorf("%w: step 1 on chain %d, quote from chain %d", ErrInconsistentQuote, in.Step1Tx.ChainID, in.FromChainID)
	}
	if in.Step1Tx.To == "" {
		return quote.MultiStepQuote{}, fmt.Errorf("%w: step 1 transaction has no recipient", ErrInconsistentQuote)
	}
	domain, err := Domain(quote.PulseChainID)
	if err != nil {
		return quote.MultiStepQuote{}, err
	}
	amount := FormatUnits(in.FromAmount, in.FromToken.Decimals) + " " + in.FromToken.Symbol
	venue := ""
	if in.Step1Tool != "" {
		venue = " with " + in.Step1Tool
	}
	approval := ""
	if in.ApprovalAddress != "" {
		approval = fmt.Sprintf(" Approve %s to spend %s first.", in.ApprovalAddress, amount)
	}
	return quote.MultiStepQuote{
		ID:                  in.ID,
		Provider:            registry.ProviderPulseroute,
		Type:                ShapeCType,
		TotalSteps:          2,
		SingleSignature:     true,
		IntermediateChainID: in.IntermediateChainID,
		IntermediateToken:   in.IntermediateToken.Hex(),
		Estimate: quote.MultiStepEstimate{
			FromAmount:        in.FromAmount.String(),
			ToAmount:          in.ToAmount.String(),
			ToAmountMin:       in.ToAmountMin.String(),
			ExecutionDuration: in.ExecutionDuration,
		},
		Steps: []quote.Step{
			{
				Step: 1, Type: StepTypeSwap,
				Description: fmt.Sprintf("Swap %s into USDC on chain %d%s, delivered to the inbound receiver %s.", amount, in.FromChainID, venue, in.InboundReceiver.Hex()),
				TransactionRequest: &quote.StepTx{
					To:      in.Step1Tx.To,
					Data:    hexutil.Encode(in.Step1Tx.Data),
					Value:   hexValue(in.Step1Tx.Value),
					ChainID: in.Step1Tx.ChainID,
				},
			},
			{
				Step: 2, Type: StepTypeAutomate, Automated: true,
				Description: fmt.Sprintf("Bridge the USDC to chain %d as USDCh and swap it into %s for %s.", quote.PulseChainID, in.ToToken.Symbol, in.ToAddress.Hex()),
			},
		},
		Instructions: quote.Instructions{
			Step1: fmt.Sprintf("Sign and send the step 1 transaction on chain %d.%s", in.FromChainID, approval),
			Step2: fmt.Sprintf("After step 1 confirms, sign the %s message of afterStep1.eip712 and send it with afterStep1.body to %s; the service then bridges and swaps on chain %d automatically.", RegisterPrimaryType, RegisterAction, quote.PulseChainID),
			Step3: fmt.Sprintf("If the final DEX swap on chain %d fails, the bridged USDCh is returned automatically to %s on chain %d, so you end with spendable funds.", quote.PulseChainID, in.ToAddress.Hex(), quote.PulseChainID),
		},
		AfterStep1: quote.AfterStep1{
			Action:            RegisterAction,
			SignatureRequired: true,
			EIP712:            RegisterSpec(in.FromChainID),
			Body:              RegisterBodyTemplate(in.FromAddress, in.ToAddress, common.HexToAddress(in.ToToken.Address), domain),
		},
	}, nil
}
