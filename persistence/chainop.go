package persistence

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
)

// prefixChainOp starts simop/<chainID:8><seq:8>: the operations applied to
// a sandbox chain (sandboxnet.Op), in the order they were applied, which is
// everything needed to rebuild the chain by applying them again.
const prefixChainOp = "simop/"

// chainOpKey is the key of chain chainID's seq-th operation.
func chainOpKey(chainID, seq uint64) []byte {
	k := make([]byte, 0, len(prefixChainOp)+16)
	k = append(k, prefixChainOp...)
	k = binary.BigEndian.AppendUint64(k, chainID)
	return binary.BigEndian.AppendUint64(k, seq)
}

// chainOpRecord is the on-disk form of a sandboxnet.Op: addresses and hashes
// as hex, amounts as decimal strings, the time in RFC 3339 with nanoseconds.
type chainOpRecord struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	At   string `json:"at"`
	// A send's.
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`
	Data     string `json:"data,omitempty"`
	Value    string `json:"value,omitempty"`
	GasLimit uint64 `json:"gasLimit,omitempty"`
	// A faucet top-up's or a credit's.
	Holder string `json:"holder,omitempty"`
	Token  string `json:"token,omitempty"`
	Amount string `json:"amount,omitempty"`
	TxHash string `json:"txHash"`
}

func (r chainOpRecord) version() int { return r.V }

func encodeChainOp(op sandboxnet.Op) ([]byte, error) {
	rec := chainOpRecord{V: 1, Kind: string(op.Kind), At: op.Time.UTC().Format(time.RFC3339Nano), TxHash: op.TxHash.Hex()}
	switch op.Kind {
	case sandboxnet.OpSend:
		rec.From, rec.To = op.From.Hex(), op.Tx.To.Hex()
		rec.Data = "0x" + hex.EncodeToString(op.Tx.Data)
		if op.Tx.Value != nil {
			rec.Value = op.Tx.Value.String()
		}
		rec.GasLimit = op.Tx.GasLimit
	case sandboxnet.OpFaucet, sandboxnet.OpCredit:
		if op.Amount == nil {
			return nil, errors.New("no amount")
		}
		rec.Holder, rec.Token, rec.Amount = op.Holder.Hex(), op.Token.Hex(), op.Amount.String()
	default:
		return nil, fmt.Errorf("%w: %q", sandboxnet.ErrUnknownOp, op.Kind)
	}
	return json.Marshal(rec)
}

func decodeChainOp(val []byte) (sandboxnet.Op, error) {
	rec, err := decodeV1[chainOpRecord](val, "sandbox chain operation")
	if err != nil {
		return sandboxnet.Op{}, err
	}
	op := sandboxnet.Op{Kind: sandboxnet.OpKind(rec.Kind), TxHash: common.HexToHash(rec.TxHash)}
	if op.Time, err = time.Parse(time.RFC3339Nano, rec.At); err != nil {
		return op, fmt.Errorf("persistence: sandbox chain operation time %q: %w", rec.At, err)
	}
	bad := func(field, v string) error {
		return fmt.Errorf("persistence: sandbox chain operation: malformed %s %q", field, v)
	}
	switch op.Kind {
	case sandboxnet.OpSend:
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
	case sandboxnet.OpFaucet, sandboxnet.OpCredit:
		op.Holder, op.Token = common.HexToAddress(rec.Holder), common.HexToAddress(rec.Token)
		v, ok := new(big.Int).SetString(rec.Amount, 10)
		if !ok {
			return op, bad("amount", rec.Amount)
		}
		op.Amount = v
	default:
		return op, fmt.Errorf("persistence: %w: %q", sandboxnet.ErrUnknownOp, rec.Kind)
	}
	return op, nil
}

// AppendChainOp stores op as the seq-th operation applied to sandbox chain
// chainID, synced before it returns: the chain's owner answers for an
// operation only once it is on disk, so that every acknowledged
// transaction survives a restart. A seq already stored is refused with
// ErrExists and nothing is written.
func (s *Store) AppendChainOp(ctx context.Context, chainID, seq uint64, op sandboxnet.Op) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	val, err := encodeChainOp(op)
	if err != nil {
		return fmt.Errorf("persistence: encode operation %d of chain %d: %w", seq, chainID, err)
	}
	key := chainOpKey(chainID, seq)
	switch _, err := s.get(key); {
	case err == nil:
		return fmt.Errorf("%w: operation %d of chain %d", ErrExists, seq, chainID)
	case !errors.Is(err, ErrNotFound):
		return fmt.Errorf("persistence: read operation %d of chain %d: %w", seq, chainID, err)
	}
	if err := s.db.Set(key, val, pebble.Sync); err != nil {
		return fmt.Errorf("persistence: append operation %d of chain %d: %w", seq, chainID, err)
	}
	return nil
}

// ChainOps calls fn with every operation stored for sandbox chain chainID,
// in sequence order, stopping at the first error fn returns.
func (s *Store) ChainOps(ctx context.Context, chainID uint64, fn func(seq uint64, op sandboxnet.Op) error) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	lower := chainOpKey(chainID, 0)
	upper := chainOpKey(chainID+1, 0)
	if chainID == ^uint64(0) {
		upper = prefixUpperBound(prefixChainOp)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("persistence: scan operations of chain %d: %w", chainID, err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		seq := binary.BigEndian.Uint64(it.Key()[len(prefixChainOp)+8:])
		op, err := decodeChainOp(it.Value())
		if err != nil {
			return fmt.Errorf("operation %d of chain %d: %w", seq, chainID, err)
		}
		if err := fn(seq, op); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("persistence: scan operations of chain %d: %w", chainID, err)
	}
	return nil
}
