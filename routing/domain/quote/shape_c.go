package quote

// Shape C is data.quote of a pulseroute multi-step inbound quote: step 1 is
// a transaction the user signs on the source chain, step 2 is done by the
// service once the user registers the step-1 deposit with an EIP-712
// signature. The pulseroute provider builds it; AppendResponse renders it
// with encoding/json, whose bytes clients already receive.

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

// EIP712Field is one member of an EIP-712 struct type.
type EIP712Field struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// EIP712Domain is the domain as Shape C shows it.
type EIP712Domain struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	ChainID uint64 `json:"chainId"`
}

// EIP712Types is the types object of Shape C: only RegisterDeposit, since
// wallets add EIP712Domain themselves.
type EIP712Types struct {
	RegisterDeposit []EIP712Field `json:"RegisterDeposit"`
}

// EIP712Spec is afterStep1.eip712 of Shape C: what a client needs to have
// the user sign the registration.
type EIP712Spec struct {
	Domain      EIP712Domain `json:"domain"`
	Types       EIP712Types  `json:"types"`
	PrimaryType string       `json:"primaryType"`
}

// RegisterBody is the body of POST /v1/inbound-receiver/register; Shape C's
// afterStep1.body is one with placeholders for what is unknown when the
// quote is made (the step-1 hash and the signature).
type RegisterBody struct {
	TxHash            string `json:"txHash"`
	FromAddress       string `json:"fromAddress"`
	ToAddress         string `json:"toAddress"`
	OutputToken       string `json:"outputToken"`
	DestinationDomain uint32 `json:"destinationDomain"`
	Signature         string `json:"signature"`
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
