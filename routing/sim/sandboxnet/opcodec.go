package sandboxnet

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// chainOpRecord is the on-disk form of an Op: addresses and hashes
// as hex, amounts as decimal strings, the time in RFC 3339 with nanoseconds.
type chainOpRecord struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	At   string `json:"at"`
	// A send's or a relay's.
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`
	Data     string `json:"data,omitempty"`
	Value    string `json:"value,omitempty"`
	GasLimit uint64 `json:"gasLimit,omitempty"`
	// A faucet top-up's or a credit's.
	Holder string `json:"holder,omitempty"`
	Token  string `json:"token,omitempty"`
	Amount string `json:"amount,omitempty"`
	// A raw op's signed transaction, 0x-hex.
	Raw    string `json:"raw,omitempty"`
	TxHash string `json:"txHash"`
	// The request that asked for the op (Op.Request); absent when none
	// did, so that the records written before it existed are unchanged.
	Req string `json:"req,omitempty"`
}

// EncodeOp is op's record as the owner of the chains stores it: addresses
// and hashes as hex, amounts as decimal strings, the time in RFC 3339 with
// nanoseconds, under version 1. The bytes are what the store keeps under
// simop/: they must not change for operations already written.
func EncodeOp(op Op) ([]byte, error) {
	rec := chainOpRecord{V: 1, Kind: string(op.Kind), At: op.Time.UTC().Format(time.RFC3339Nano), TxHash: op.TxHash.Hex(), Req: op.Request}
	switch op.Kind {
	case OpSend, OpRelay:
		rec.From, rec.To = op.From.Hex(), op.Tx.To.Hex()
		rec.Data = "0x" + hex.EncodeToString(op.Tx.Data)
		if op.Tx.Value != nil {
			rec.Value = op.Tx.Value.String()
		}
		rec.GasLimit = op.Tx.GasLimit
	case OpFaucet, OpCredit:
		if op.Amount == nil {
			return nil, errors.New("no amount")
		}
		rec.Holder, rec.Token, rec.Amount = op.Holder.Hex(), op.Token.Hex(), op.Amount.String()
	case OpRaw:
		if len(op.Raw) == 0 {
			return nil, errors.New("no raw transaction")
		}
		rec.Raw = "0x" + hex.EncodeToString(op.Raw)
	case OpBaseFee:
		if op.Amount == nil {
			return nil, errors.New("no base fee")
		}
		rec.Amount = op.Amount.String()
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownOp, op.Kind)
	}
	return json.Marshal(rec)
}

// DecodeOp reads an operation EncodeOp wrote; any other version is refused.
func DecodeOp(val []byte) (Op, error) {
	var rec chainOpRecord
	var err error
	if err = json.Unmarshal(val, &rec); err != nil {
		return Op{}, fmt.Errorf("sandboxnet: decode operation: %w", err)
	}
	if rec.V != 1 {
		return Op{}, fmt.Errorf("sandboxnet: operation record version %d unknown", rec.V)
	}
	op := Op{Kind: OpKind(rec.Kind), TxHash: common.HexToHash(rec.TxHash), Request: rec.Req}
	if op.Time, err = time.Parse(time.RFC3339Nano, rec.At); err != nil {
		return op, fmt.Errorf("sandboxnet: operation time %q: %w", rec.At, err)
	}
	bad := func(field, v string) error {
		return fmt.Errorf("sandboxnet: operation: malformed %s %q", field, v)
	}
	switch op.Kind {
	case OpSend, OpRelay:
		op.From, op.Tx.To, op.Tx.GasLimit = common.HexToAddress(rec.From), common.HexToAddress(rec.To), rec.GasLimit
		if op.Tx.Data, err = hex.DecodeString(strings.TrimPrefix(rec.Data, "0x")); err != nil {
			return op, bad("data", rec.Data)
		}
		if len(op.Tx.Data) == 0 {
			op.Tx.Data = nil
		}
		if rec.Value != "" {
			v, ok := new(big.Int).SetString(rec.Value, 10)
			if !ok {
				return op, bad("value", rec.Value)
			}
			op.Tx.Value = v
		}
	case OpFaucet, OpCredit:
		op.Holder, op.Token = common.HexToAddress(rec.Holder), common.HexToAddress(rec.Token)
		v, ok := new(big.Int).SetString(rec.Amount, 10)
		if !ok {
			return op, bad("amount", rec.Amount)
		}
		op.Amount = v
	case OpRaw:
		if op.Raw, err = hex.DecodeString(strings.TrimPrefix(rec.Raw, "0x")); err != nil || len(op.Raw) == 0 {
			return op, bad("raw", rec.Raw)
		}
	case OpBaseFee:
		v, ok := new(big.Int).SetString(rec.Amount, 10)
		if !ok {
			return op, bad("amount", rec.Amount)
		}
		op.Amount = v
	default:
		return op, fmt.Errorf("%w: %q", ErrUnknownOp, rec.Kind)
	}
	return op, nil
}
