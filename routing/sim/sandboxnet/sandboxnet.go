// Package sandboxnet is the sandbox network: one sandbox chain (package
// simchain) for every EVM chain of the registry, with Swapgate's contracts
// deployed on it, and the operations the service applies to those chains
// (Op), recorded so that applying the same operations again to freshly built
// chains gives the same blocks, hashes and balances. It is plain Go: the
// owner of the chains (actors/sandboxchain) serialises access and keeps the
// record.
//
// # What every chain holds
//
// Built by New, before any transaction: the registry's tokens as ERC-20s;
// the sandbox router (sandbox.DeployRouter: a minter of every token, with a
// native reserve to pay swaps into the native coin); on the chains of the
// USDC warp route, the collateral router, Swapgate's sender contract and
// inbound receiver; on chain 369, USDCh's synthetic router and PulseX v2
// (factory, pairs holding the genesis reserves, router, and the
// arbitrageur's genesis balances: pulsesim.DeploySandbox and DeployPulseX),
// so that a swap through the router moves a pool's reserves as on chain,
// and an ordinary send of a large swap (faucet, approve, swap) is how a
// test moves one. The genesis block is stamped GenesisTime on
// every chain, so that a chain's history depends only on the operations
// applied to it.
//
// Every address without code starts with 1,000 whole units of every token
// of its chain and with the native genesis allocation: 100 coins, or the
// coins worth GenesisNativeUSD at the registry's reference price where 100
// coins are worth less (on PulseChain, 333,333,334 PLS), so that everyone
// can pay gas and interchain payments on every chain. Gas costs the chain's
// reference gas price (sandbox.ReferenceGasPrice: the registry's base fee
// plus the standard tip), fixed for the chain's life; signed transactions
// pay the base fee (the registry's, until an OpBaseFee moves it) and their
// priority fee, as EIP-1559 says.
//
// # Operations
//
// An Op is a broadcast transaction (OpSend), a signed transaction sent to
// the chain's node (OpRaw), a base fee set (OpBaseFee), a faucet top-up
// (OpFaucet), a credit (OpCredit: what a tracker delivers on a bridge's destination
// chain, minted by the faucet account like a top-up, so that it is a mined
// transaction with a hash and a Transfer log) or a relay (OpRelay: the
// sandbox Hyperlane relayer's delivery of a warp-route message, a
// transaction from pulsesim.RelayerAddress to the destination router's
// process, which no broadcast may send). Chain.Apply runs one with
// the chain's clock set to the op's Time, which is what makes a replay
// reproduce the block timestamps, and so the hashes.
package sandboxnet

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/evmtx"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// GenesisTime stamps the genesis block of every sandbox chain.
var GenesisTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// GenesisNativeUSD is the least USD value of the native genesis allocation
// of an address, at the registry's reference price.
const GenesisNativeUSD = 10_000

// MaxFaucetUnits bounds one faucet top-up (see evmtx.MaxFaucetUnits).
const MaxFaucetUnits = evmtx.MaxFaucetUnits

// Errors of the sandbox network, shared by its owner and its clients; they
// are evmtx's, which the clients speak without importing the simulator.
var (
	ErrFaucetLimit  = evmtx.ErrFaucetLimit
	ErrUnknownChain = evmtx.ErrUnknownChain
	ErrUnavailable  = evmtx.ErrUnavailable
)

// Config is what the chains are built from.
type Config struct {
	Registry *registry.Registry
	// Contracts are pulseroute's contract facts (nil: the defaults), so the
	// chains deploy Swapgate's contracts where the quotes send users.
	Contracts *pulseroute.Contracts
	// Payments gives the interchain gas payment the warp routes require
	// (nil: pulseroute's sandbox chain state, which the quotes use).
	Payments pulseroute.ChainState
}

// ChainIDs lists the sandbox chains: every EVM chain of the registry, in
// registry order.
func ChainIDs(reg *registry.Registry) []uint64 {
	var out []uint64
	for _, c := range reg.Chains() {
		if c.ChainType == registry.EVM {
			out = append(out, c.ID)
		}
	}
	return out
}

// Chain is one sandbox chain with Swapgate's contracts, changed only by
// Apply. It is not safe for concurrent use.
type Chain struct {
	sim       *simchain.Chain
	contracts *pulseroute.Contracts
	now       time.Time
}

// New builds the sandbox chain of an EVM chain of the registry, with every
// contract deployed and nothing mined after the genesis block.
func New(cfg Config, chainID uint64) (*Chain, error) {
	if cfg.Registry == nil {
		return nil, errors.New("sandboxnet: no registry")
	}
	rc, ok := cfg.Registry.Chain(chainID)
	if !ok || rc.ChainType != registry.EVM {
		return nil, fmt.Errorf("%w: %d", simchain.ErrNotEVM, chainID)
	}
	contracts := cfg.Contracts
	if contracts == nil {
		contracts = pulseroute.DefaultContracts()
	}
	payments := cfg.Payments
	if payments == nil {
		sc, err := pulsesim.NewSandboxChain(cfg.Registry)
		if err != nil {
			return nil, fmt.Errorf("sandboxnet: %w", err)
		}
		payments = sc
	}
	price, ok := sandbox.ReferenceGasPrice(rc)
	if !ok {
		return nil, fmt.Errorf("sandboxnet: chain %d has no reference gas price", chainID)
	}
	genesis, err := GenesisNative(rc)
	if err != nil {
		return nil, err
	}
	c := &Chain{now: GenesisTime, contracts: contracts}
	c.sim, err = simchain.New(simchain.Config{
		Registry: cfg.Registry, ChainID: chainID, GasPrice: price, GenesisNative: genesis, BaseFee: baseFee(rc, price),
		Clock: func() time.Time { return c.now },
	})
	if err != nil {
		return nil, fmt.Errorf("sandboxnet: %w", err)
	}
	if err := sandbox.DeployRouter(c.sim); err != nil {
		return nil, err
	}
	if err := pulsesim.DeploySandbox(c.sim, contracts, payments); err != nil {
		return nil, err
	}
	return c, nil
}

// baseFee is a chain's genesis base fee: the registry's, in wei, at most
// the gas price (the rest of which is the tip the chain suggests).
func baseFee(rc *registry.Chain, price *big.Int) *big.Int {
	fee, _ := big.NewFloat(math.Round(rc.BaseFeeGwei * 1e9)).Int(nil)
	if fee.Sign() < 0 || fee.Cmp(price) > 0 {
		return new(big.Int).Set(price)
	}
	return fee
}

// GenesisNative is the native coin every address of the chain starts with,
// in base units: 100 coins, or the whole coins worth GenesisNativeUSD at the
// reference price when that is more.
func GenesisNative(rc *registry.Chain) (*big.Int, error) {
	coins := big.NewInt(simchain.GenesisNativeUnits)
	price, err := strconv.ParseFloat(rc.NativeToken.PriceUSD, 64)
	if err != nil || !(price > 0) {
		return nil, fmt.Errorf("sandboxnet: chain %d's native coin has no usable reference price %q", rc.ID, rc.NativeToken.PriceUSD)
	}
	if need := math.Ceil(GenesisNativeUSD / price); need > float64(simchain.GenesisNativeUnits) {
		coins, _ = big.NewFloat(need).Int(nil)
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(rc.NativeToken.Decimals)), nil)
	return coins.Mul(coins, unit), nil
}

// ID is the chain's id.
func (c *Chain) ID() uint64 { return c.sim.ChainID() }

// Sim is the chain's state and history, for reads (balances, receipts,
// logs, calls). Changes go through Apply, so that they are recorded.
func (c *Chain) Sim() *simchain.Chain { return c.sim }

// OpKind names what an Op does.
type OpKind string

// The operations.
const (
	// OpSend is a broadcast transaction: Tx sent by From.
	OpSend OpKind = "send"
	// OpFaucet tops Holder up with Amount of Token.
	OpFaucet OpKind = "faucet"
	// OpCredit delivers Amount of Token to Holder, as a bridge's
	// destination does.
	OpCredit OpKind = "credit"
	// OpRaw is a signed transaction sent to the chain's node (Raw, its
	// binary encoding): mined at once, or queued until it may be
	// (simchain's SendRaw).
	OpRaw OpKind = "raw"
	// OpBaseFee sets the chain's base fee to Amount wei.
	OpBaseFee OpKind = "basefee"
	// OpRelay is the relayer's delivery of a warp-route message: Tx sent
	// by pulsesim.RelayerAddress (From) to the destination router (see
	// RelayOp).
	OpRelay OpKind = "relay"
)

// Op is one operation applied to a chain: what is recorded, and replayed.
type Op struct {
	Kind OpKind
	// Time is the chain's clock while the op runs: its block's timestamp,
	// or one second after the parent's if that is later.
	Time time.Time
	// From and Tx are a send's (or a relay's) sender and transaction
	// request.
	From common.Address
	Tx   simchain.TxRequest
	// Holder, Token (the zero address: the native coin) and Amount are a
	// faucet top-up's or a credit's.
	Holder common.Address
	Token  common.Address
	Amount *big.Int
	// Raw is a signed transaction's binary encoding.
	Raw []byte
	// TxHash is the hash of the transaction the op mined (a raw op's own
	// transaction, mined or queued; none for a base fee), set by the owner
	// once applied, so that a replay can tell it reproduced the history.
	TxHash common.Hash
	// Request is the id of the request that asked for the op, where its
	// owner is a cluster grain whose callers retry (empty otherwise): a
	// replay learns from it which requests are done, so that a retry that
	// reaches a later activation mines nothing twice.
	Request string
}

// ErrUnknownOp is an Op of no known kind.
var ErrUnknownOp = errors.New("sandboxnet: unknown operation")

// Applied is what an operation did.
type Applied struct {
	// Hash is the op's own transaction: the one a send, top-up or credit
	// mined, or a raw op's signed transaction, mined or queued; zero for a
	// base fee.
	Hash common.Hash
	// Receipt is the op's own transaction's receipt, nil while a raw op's
	// transaction waits (and for a base fee).
	Receipt *simchain.Receipt
	// Mined lists every transaction the op mined, its own first when it
	// mined at once, then the queued ones it unblocked, in order.
	Mined []*simchain.Receipt
}

// Do runs one operation at its time, as Apply does, for every kind: a
// refusal is an error with nothing changed (and nothing to record); a
// faucet or credit transaction that mined but failed is an error too,
// with Applied filled, and must be recorded. After the op, whatever queued
// signed transaction it unblocked is mined.
func (c *Chain) Do(op Op) (Applied, error) {
	c.now = op.Time
	var a Applied
	switch op.Kind {
	case OpSend, OpFaucet, OpCredit, OpRelay:
		r, err := c.Apply(op)
		if r == nil {
			return a, err
		}
		a.Hash, a.Receipt, a.Mined = r.TxHash, r, []*simchain.Receipt{r}
		a.Mined = append(a.Mined, c.sim.Promote()...)
		return a, err
	case OpRaw:
		h, mined, err := c.sim.SendRaw(op.Raw)
		if err != nil {
			return a, err
		}
		a.Hash, a.Mined = h, mined
		for _, r := range mined {
			if r.TxHash == h {
				a.Receipt = r
			}
		}
		return a, nil
	case OpBaseFee:
		mined, err := c.sim.SetBaseFee(op.Amount)
		a.Mined = mined
		return a, err
	}
	return a, fmt.Errorf("%w: %q", ErrUnknownOp, op.Kind)
}

// Apply runs one operation at its time. A send refused before it is mined
// (simchain's request errors) and a faucet request refused outright return
// a nil receipt: nothing happened, and nothing needs recording. Otherwise a
// receipt is returned, with an error too for a faucet transaction that was
// mined but failed; either way the op changed the chain and must be
// recorded.
func (c *Chain) Apply(op Op) (*simchain.Receipt, error) {
	c.now = op.Time
	switch op.Kind {
	case OpSend:
		if op.From == pulsesim.RelayerAddress {
			return nil, fmt.Errorf("%w: the sandbox relayer's account sends only warp-route deliveries", simchain.ErrInvalidSender)
		}
		return c.sim.Send(op.From, op.Tx)
	case OpRelay:
		return c.sim.Send(pulsesim.RelayerAddress, op.Tx)
	case OpFaucet, OpCredit:
		return c.sim.Faucet(op.Holder, op.Token, op.Amount)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownOp, op.Kind)
}

// CheckFaucet refuses a faucet amount that is not positive or exceeds
// MaxFaucetUnits whole units of the asset.
func CheckFaucet(t simchain.Token, amount *big.Int) error {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Decimals)), nil)
	limit.Mul(limit, big.NewInt(MaxFaucetUnits))
	if amount == nil || amount.Sign() <= 0 || amount.Cmp(limit) > 0 {
		return fmt.Errorf("%w: between 1 and %s base units of %s (%d whole units)", ErrFaucetLimit, limit, t.Symbol, MaxFaucetUnits)
	}
	return nil
}

// Balance is a holder's balance of one asset of a chain.
type Balance = evmtx.Balance

// Balances lists holder's balance of every asset of the chain, the native
// coin first, then the registry's tokens in registry order.
func (c *Chain) Balances(holder common.Address) []Balance {
	toks := c.sim.Tokens()
	out := make([]Balance, len(toks))
	for i, t := range toks {
		out[i] = Balance{Token: t, Amount: c.sim.Balance(t.Address, holder)}
	}
	return out
}

// Mined is a mined transaction with its receipt and its chain. Neither is
// modified once mined; both must not be modified.
type Mined = evmtx.Mined

// RelayOp is the relay operation that delivers m on its destination chain.
func RelayOp(contracts *pulseroute.Contracts, m pulsesim.WarpMessage) (Op, error) {
	if contracts == nil {
		contracts = pulseroute.DefaultContracts()
	}
	w, ok := contracts.WarpRoute(m.Destination)
	if !ok {
		return Op{}, fmt.Errorf("sandboxnet: message %s: chain %d has no warp router", m.ID.Hex(), m.Destination)
	}
	data, err := pulsesim.ProcessCalldata(m)
	if err != nil {
		return Op{}, err
	}
	return Op{Kind: OpRelay, From: pulsesim.RelayerAddress, Tx: simchain.TxRequest{To: w.Router, Data: data, GasLimit: pulsesim.RelayGasLimit}}, nil
}

// WarpMessages lists the warp-route messages the chain dispatched in
// blocks from on, and the head it read up to.
func (c *Chain) WarpMessages(from uint64) ([]pulsesim.WarpMessage, uint64) {
	return pulsesim.WarpMessagesSince(c.sim, c.contracts, from)
}

// Delivery is the transaction that delivered message id on this chain, if
// one did.
func (c *Chain) Delivery(id common.Hash) (*simchain.Receipt, bool) {
	return pulsesim.Delivery(c.sim, c.contracts, id)
}

// CheckRelay refuses a relay operation that would not deliver now (a
// release beyond the collateral router's USDC, a message already
// delivered), by running it as a call: a relay is mined only when it
// delivers.
func (c *Chain) CheckRelay(op Op) error {
	if _, err := c.sim.Call(pulsesim.RelayerAddress, op.Tx.To, op.Tx.Data); err != nil {
		return fmt.Errorf("sandboxnet: chain %d: the delivery would fail: %w", c.ID(), err)
	}
	return nil
}
