package simchain

import (
	"errors"

	"github.com/swapgate/swapgate/routing/domain/evmtx"
)

// The gas model. It is deliberately small and deterministic, with figures
// taken from the EVM's own schedule so that the gas a receipt reports is of
// the size a wallet expects:
//
//   - every transaction pays TxGas plus TxDataNonZeroGas per non-zero byte
//     and TxDataZeroGas per zero byte of its data (its intrinsic gas); a
//     plain native transfer therefore costs exactly 21,000;
//   - entering a contract's code, at the top level or from another
//     contract, costs ContractCallGas; a call between contracts that carries
//     native value costs CallValueGas more;
//   - every read of a balance, an allowance or a contract's storage slot
//     costs StorageReadGas and every write StorageWriteGas;
//   - a log costs LogGas, plus LogTopicGas per topic and LogDataGas per byte
//     of data;
//   - a contract may charge more for its own work with Env.UseGas.
//
// An ERC-20 transfer thus costs about 40,000 and a transferFrom about
// 47,000. Gas is one budget shared by a transaction and every call it makes
// (no 63/64 forwarding rule); running out of it anywhere fails the whole
// transaction with "out of gas" and uses its whole gas limit, whatever the
// contracts did with the error.
const (
	// BlockGasLimit is the most gas one transaction may ask for; a
	// transaction that names no gas limit gets it.
	BlockGasLimit = evmtx.BlockGasLimit
	// TxGas is the base cost of every transaction.
	TxGas = 21_000
	// TxDataZeroGas and TxDataNonZeroGas are the cost of a zero and a
	// non-zero byte of a transaction's data.
	TxDataZeroGas    = 4
	TxDataNonZeroGas = 16
	// ContractCallGas is the cost of entering a contract's code.
	ContractCallGas = 2_600
	// CallValueGas is the extra cost of a call between contracts that
	// carries native value.
	CallValueGas = 9_000
	// StorageReadGas and StorageWriteGas are the cost of reading and of
	// writing one balance, allowance or storage slot.
	StorageReadGas  = 2_100
	StorageWriteGas = 5_000
	// LogGas, LogTopicGas and LogDataGas price a log: a base, a cost per
	// topic and a cost per byte of data.
	LogGas      = 375
	LogTopicGas = 375
	LogDataGas  = 8
	// MaxCallDepth is how deep contracts may call one another.
	MaxCallDepth = 1024
)

// ErrOutOfGas is the failure of a transaction or call whose gas ran out.
var ErrOutOfGas = errors.New("out of gas")

// IntrinsicGas is what a transaction with this data costs before any code
// runs: TxGas plus the cost of its data bytes.
func IntrinsicGas(data []byte) uint64 {
	g := uint64(TxGas)
	for _, b := range data {
		if b == 0 {
			g += TxDataZeroGas
		} else {
			g += TxDataNonZeroGas
		}
	}
	return g
}

// meter is the gas budget of one transaction or call. Running out is
// sticky: once a charge fails, every later charge fails too and the whole
// limit counts as used.
type meter struct {
	limit, used uint64
	out         bool
}

func (m *meter) use(n uint64) error {
	if m.out || n > m.limit-m.used {
		m.used, m.out = m.limit, true
		return ErrOutOfGas
	}
	m.used += n
	return nil
}

func (m *meter) left() uint64 { return m.limit - m.used }
