package pulseroute

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/swapgate/swapgate/routing/quote"
	"github.com/swapgate/swapgate/routing/registry"
)

// Values fixed by the specification for the pulseroute shapes.
const (
	ShapeCType       = "multi-step"
	StepTypeSwap     = "aggregator"
	StepTypeAutomate = "pulseroute-automatic"
)

// TokenRef is a token as shapes B and C show it.
type TokenRef struct {
	Address  string `json:"address"`
	Symbol   string `json:"symbol"`
	Decimals uint8  `json:"decimals"`
}

// TokenRefOf is the TokenRef of a registry token.
func TokenRefOf(t *registry.Token) TokenRef {
	return TokenRef{Address: t.Address, Symbol: t.Symbol, Decimals: t.Decimals}
}

// DirectTx is Shape B's transactionRequest; numbers are hex strings as the
// standard shape renders them, chainId an integer.
type DirectTx struct {
	To       string `json:"to"`
	Data     string `json:"data"`
	Value    string `json:"value"`
	ChainID  uint64 `json:"chainId"`
	GasLimit string `json:"gasLimit"`
}

// FeeBreakdown splits a direct quote's cost. TotalFeeBps is ServiceFeeBps
// plus DexFeeBps, so the fee-free outbound bridge (no service fee, no DEX
// leg) reports 0 as the specification requires. MessagingFee is the warp
// route's gas payment in the source chain's native coin (wei, decimal).
type FeeBreakdown struct {
	TotalFeeBps   int    `json:"totalFeeBps"`
	ServiceFeeBps int    `json:"serviceFeeBps"`
	DexFeeBps     int    `json:"dexFeeBps"`
	MessagingFee  string `json:"messagingFee"`
}

// DirectQuote is Shape B, data.quote of a pulseroute direct quote (inbound
// via the sender contract, or outbound via transferRemote on USDCh).
type DirectQuote struct {
	ID                 string       `json:"id"`
	Provider           string       `json:"provider"`
	Tool               string       `json:"tool"`
	FromChainID        uint64       `json:"fromChainId"`
	ToChainID          uint64       `json:"toChainId"`
	FromToken          TokenRef     `json:"fromToken"`
	ToToken            TokenRef     `json:"toToken"`
	FromAmount         string       `json:"fromAmount"`
	Fee                string       `json:"fee"`
	FeePercentage      string       `json:"feePercentage"`
	BridgeAmount       string       `json:"bridgeAmount"`
	EstimatedOutput    string       `json:"estimatedOutput"`
	MinOutput          string       `json:"minOutput"`
	BridgeGasEstimate  string       `json:"bridgeGasEstimate"`
	EstimatedDuration  int          `json:"estimatedDuration"`
	SenderContract     string       `json:"senderContract"`
	TransactionRequest DirectTx     `json:"transactionRequest"`
	FeeBreakdown       FeeBreakdown `json:"feeBreakdown"`
}

// DirectInput is what NewDirectQuote needs. Fee is the service fee taken
// from FromAmount (in source-token units) at FeeBps; what is left is
// bridged. BridgeGasEstimate is the quoteGasPayment value sent as msg.value.
type DirectInput struct {
	ID                string
	Tool              string
	FromChainID       uint64
	ToChainID         uint64
	FromToken         TokenRef
	ToToken           TokenRef
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
func NewDirectQuote(in DirectInput) (DirectQuote, error) {
	if err := nonNegative(
		namedAmount{"fromAmount", in.FromAmount}, namedAmount{"fee", in.Fee},
		namedAmount{"estimatedOutput", in.EstimatedOutput}, namedAmount{"minOutput", in.MinOutput},
		namedAmount{"bridgeGasEstimate", in.BridgeGasEstimate},
	); err != nil {
		return DirectQuote{}, err
	}
	if in.Fee.Cmp(in.FromAmount) > 0 {
		return DirectQuote{}, fmt.Errorf("%w: fee %s exceeds fromAmount %s", ErrInconsistentQuote, in.Fee, in.FromAmount)
	}
	if in.MinOutput.Cmp(in.EstimatedOutput) > 0 {
		return DirectQuote{}, fmt.Errorf("%w: minOutput %s exceeds estimatedOutput %s", ErrInconsistentQuote, in.MinOutput, in.EstimatedOutput)
	}
	if in.Tx.ChainID != in.FromChainID {
		return DirectQuote{}, fmt.Errorf("%w: transaction on chain %d, quote from chain %d", ErrInconsistentQuote, in.Tx.ChainID, in.FromChainID)
	}
	if !strings.EqualFold(in.Tx.To, in.SenderContract.Hex()) {
		return DirectQuote{}, fmt.Errorf("%w: transaction to %s, sender contract %s", ErrInconsistentQuote, in.Tx.To, in.SenderContract.Hex())
	}
	return DirectQuote{
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
		TransactionRequest: DirectTx{
			To:       in.SenderContract.Hex(),
			Data:     hexutil.Encode(in.Tx.Data),
			Value:    hexValue(in.Tx.Value),
			ChainID:  in.Tx.ChainID,
			GasLimit: hexutil.EncodeUint64(in.Tx.GasLimit),
		},
		FeeBreakdown: FeeBreakdown{
			TotalFeeBps:   in.FeeBps + in.DexFeeBps,
			ServiceFeeBps: in.FeeBps,
			DexFeeBps:     in.DexFeeBps,
			MessagingFee:  in.BridgeGasEstimate.String(),
		},
	}, nil
}

// StepTx is a step's transactionRequest in Shape C: {to, data, value,
// chainId}, value in hex.
type StepTx struct {
	To      string `json:"to"`
	Data    string `json:"data"`
	Value   string `json:"value"`
	ChainID uint64 `json:"chainId"`
}

// Step is one entry of Shape C's steps. Step 1 carries the transaction the
// user signs; step 2 is done by the service and is marked automated.
type Step struct {
	Step               int     `json:"step"`
	Type               string  `json:"type"`
	Description        string  `json:"description"`
	TransactionRequest *StepTx `json:"transactionRequest,omitempty"`
	Automated          bool    `json:"automated,omitempty"`
}

// MultiStepEstimate is Shape C's estimate; amounts are decimal strings.
type MultiStepEstimate struct {
	FromAmount        string `json:"fromAmount"`
	ToAmount          string `json:"toAmount"`
	ToAmountMin       string `json:"toAmountMin"`
	ExecutionDuration int    `json:"executionDuration"`
}

// Instructions are Shape C's human-readable steps; Step3 is the fallback.
type Instructions struct {
	Step1 string `json:"step1"`
	Step2 string `json:"step2"`
	Step3 string `json:"step3"`
}

// AfterStep1 tells the client how to register the step-1 deposit.
type AfterStep1 struct {
	Action            string       `json:"action"`
	SignatureRequired bool         `json:"signatureRequired"`
	EIP712            EIP712Spec   `json:"eip712"`
	Body              RegisterBody `json:"body"`
}

// MultiStepQuote is Shape C, data.quote of a pulseroute multi-step inbound
// quote.
type MultiStepQuote struct {
	ID                  string            `json:"id"`
	Provider            string            `json:"provider"`
	Type                string            `json:"type"`
	TotalSteps          int               `json:"totalSteps"`
	SingleSignature     bool              `json:"singleSignature"`
	IntermediateChainID uint64            `json:"intermediateChainId"`
	IntermediateToken   string            `json:"intermediateToken"`
	Estimate            MultiStepEstimate `json:"estimate"`
	Steps               []Step            `json:"steps"`
	Instructions        Instructions      `json:"instructions"`
	AfterStep1          AfterStep1        `json:"afterStep1"`
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
	FromToken           TokenRef
	ToToken             TokenRef
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
func NewMultiStepQuote(in MultiStepInput) (MultiStepQuote, error) {
	if err := nonNegative(
		namedAmount{"fromAmount", in.FromAmount}, namedAmount{"toAmount", in.ToAmount},
		namedAmount{"toAmountMin", in.ToAmountMin},
	); err != nil {
		return MultiStepQuote{}, err
	}
	if in.ToAmountMin.Cmp(in.ToAmount) > 0 {
		return MultiStepQuote{}, fmt.Errorf("%w: toAmountMin %s exceeds toAmount %s", ErrInconsistentQuote, in.ToAmountMin, in.ToAmount)
	}
	if in.Step1Tx.ChainID != in.FromChainID {
		return MultiStepQuote{}, fmt.Errorf("%w: step 1 on chain %d, quote from chain %d", ErrInconsistentQuote, in.Step1Tx.ChainID, in.FromChainID)
	}
	if in.Step1Tx.To == "" {
		return MultiStepQuote{}, fmt.Errorf("%w: step 1 transaction has no recipient", ErrInconsistentQuote)
	}
	domain, err := Domain(PulseChainID)
	if err != nil {
		return MultiStepQuote{}, err
	}
	amount := FormatUnits(in.FromAmount, in.FromToken.Decimals) + " " + in.FromToken.Symbol
	approval := ""
	if in.ApprovalAddress != "" {
		approval = fmt.Sprintf(" Approve %s to spend %s first.", in.ApprovalAddress, amount)
	}
	return MultiStepQuote{
		ID:                  in.ID,
		Provider:            registry.ProviderPulseroute,
		Type:                ShapeCType,
		TotalSteps:          2,
		SingleSignature:     true,
		IntermediateChainID: in.IntermediateChainID,
		IntermediateToken:   in.IntermediateToken.Hex(),
		Estimate: MultiStepEstimate{
			FromAmount:        in.FromAmount.String(),
			ToAmount:          in.ToAmount.String(),
			ToAmountMin:       in.ToAmountMin.String(),
			ExecutionDuration: in.ExecutionDuration,
		},
		Steps: []Step{
			{
				Step: 1, Type: StepTypeSwap,
				Description: fmt.Sprintf("Swap %s into USDC on chain %d, delivered to the inbound receiver %s.", amount, in.FromChainID, in.InboundReceiver.Hex()),
				TransactionRequest: &StepTx{
					To:      in.Step1Tx.To,
					Data:    hexutil.Encode(in.Step1Tx.Data),
					Value:   hexValue(in.Step1Tx.Value),
					ChainID: in.Step1Tx.ChainID,
				},
			},
			{
				Step: 2, Type: StepTypeAutomate, Automated: true,
				Description: fmt.Sprintf("Bridge the USDC to chain %d as USDCh and swap it into %s for %s.", PulseChainID, in.ToToken.Symbol, in.ToAddress.Hex()),
			},
		},
		Instructions: Instructions{
			Step1: fmt.Sprintf("Sign and send the step 1 transaction on chain %d.%s", in.FromChainID, approval),
			Step2: fmt.Sprintf("After step 1 confirms, sign the %s message of afterStep1.eip712 and send it with afterStep1.body to %s; the service then bridges and swaps on chain %d automatically.", RegisterPrimaryType, RegisterAction, PulseChainID),
			Step3: fmt.Sprintf("If the final DEX swap on chain %d fails, the bridged USDCh is returned automatically to %s on chain %d, so you end with spendable funds.", PulseChainID, in.ToAddress.Hex(), PulseChainID),
		},
		AfterStep1: AfterStep1{
			Action:            RegisterAction,
			SignatureRequired: true,
			EIP712:            RegisterSpec(in.FromChainID),
			Body:              RegisterBodyTemplate(in.FromAddress, in.ToAddress, common.HexToAddress(in.ToToken.Address), domain),
		},
	}, nil
}
