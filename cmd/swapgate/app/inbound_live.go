package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"

	"github.com/ethereum/go-ethereum/common"

	inboundrun "github.com/swapgate/swapgate/actors/inbound"
	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/routing/adapters/evidencerpc"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/store"
)

// operatorAccount is the account the transaction manager signs for:
// --signer-address with --signer-url, the sealed key's address otherwise;
// ok false when there is neither (live mode before swapgate operator-key
// create). The external signer itself is dialled by the manager, not here.
func (a *App) operatorAccount(ctx context.Context) (addr common.Address, ok bool, err error) {
	if a.cfg.Operator.SignerURL != "" {
		return common.HexToAddress(a.cfg.Operator.SignerAddress), true, nil
	}
	key, err := a.stores.TxIntents.OperatorKey(ctx, OperatorKeyName)
	if errors.Is(err, store.ErrNotFound) {
		return common.Address{}, false, nil
	}
	if err != nil {
		return common.Address{}, false, fmt.Errorf("app: operator key: %w", err)
	}
	s, err := txm.NewLocalSigner(key)
	if err != nil {
		return common.Address{}, false, err
	}
	return s.Address(), true, nil
}

// checkInboundReceivers refuses to start live mode with an inbound
// receiver that is not the operator account. Step 1 of a multi-step quote
// delivers the user's USDC to the receiver, and step 2 spends it from
// there (approve and transferRemote on the source chain) and receives the
// bridged USDCh on 369 at the same address, so the receiver must be an
// account whose transactions the manager signs: an address it cannot sign
// for would keep every deposit sent to it. Without an operator account at
// all, a configured receiver is refused likewise. Sandbox mode has no
// flag to check: its receivers are the sandbox's.
func (a *App) checkInboundReceivers(ctx context.Context, s *startup) error {
	receivers := s.cfg.Quote.Pulse.Receivers
	if s.cfg.Mode != ModeLive || len(receivers) == 0 {
		return nil
	}
	op, ok, err := a.operatorAccount(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("--pulse-inbound-receiver: an inbound receiver must be the operator account the transaction manager signs for, " +
			"and there is none: create it (swapgate operator-key create) or name an external signer (--signer-url and --signer-address), " +
			"then give its address here")
	}
	ids := make([]uint64, 0, len(receivers))
	for id := range receivers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if !common.IsHexAddress(receivers[id]) || common.HexToAddress(receivers[id]) != op {
			return fmt.Errorf("--pulse-inbound-receiver: %d=%s is not the operator account: the transaction manager signs for %s, "+
				"which must receive step 1's USDC to send step 2; name %d=%s", id, receivers[id], op.Hex(), id, op.Hex())
		}
		if _, ok := s.cfg.EVMRPC[id]; !ok {
			a.log.Warn("an inbound receiver's chain has no --evm-rpc node: its deposits cannot be registered",
				slog.Uint64("chainId", id), slog.String("receiver", op.Hex()))
		}
	}
	return nil
}

// liveInboundChain is what the inbound runner reads in live mode: each
// source chain's node (--evm-rpc) for a registration's evidence. Step 2
// runs through the transaction manager (inboundOptions).
type liveInboundChain struct {
	evidence *inbound.EvidenceReader
}

var _ inboundrun.Chain = liveInboundChain{}

func (c liveInboundChain) Evidence(ctx context.Context, chainID uint64, txHash common.Hash) (inbound.Evidence, error) {
	return c.evidence.Evidence(ctx, chainID, txHash)
}

// QuoteRef: a live step 1 is the aggregator's transaction, which carries
// no quote reference.
func (liveInboundChain) QuoteRef(context.Context, uint64, common.Hash) ([32]byte, bool, error) {
	return [32]byte{}, false, nil
}

// startLiveInbound checks live mode's inbound receivers
// (checkInboundReceivers) and starts, with inbound receivers and
// --evm-rpc nodes, the inbound runner that serves POST
// /v1/inbound-receiver/register: the same Register as the sandbox's, the
// evidence read from the source chain's node with the manager's
// confirmations, a registration before them kept CONFIRMING until the
// tracker's horizon; step 2 through the transaction manager, as in sandbox
// mode.
func (a *App) startLiveInbound(ctx context.Context, s *startup) (err error) {
	if err := a.checkInboundReceivers(ctx, s); err != nil {
		return err
	}
	cfg := s.cfg
	if cfg.Mode != ModeLive || len(cfg.Quote.Pulse.Receivers) == 0 || len(cfg.EVMRPC) == 0 {
		return nil
	}
	// The contracts live quotes send users to: the configured receivers,
	// not the sandbox's.
	pc, err := cfg.Quote.Pulse.config()
	if err != nil {
		return fmt.Errorf("app: pulseroute contracts: %w", err)
	}
	contracts, err := pulseroute.NewLiveContracts(pc)
	if err != nil {
		return fmt.Errorf("app: pulseroute contracts: %w", err)
	}
	if a.evidence, err = evidencerpc.Dial(ctx, cfg.EVMRPC, cfg.RPCTimeout, nil); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.inbound, err = inboundrun.Start(ctx, a.stores.Inbound, liveInboundChain{evidence: a.evidence}, a.quotes.quoter,
		a.inboundOptions(s, inboundrun.Options{Contracts: contracts})); err != nil {
		return fmt.Errorf("app: start the inbound runner: %w", err)
	}
	s.inboundDeposits = a.inbound
	return nil
}

// inboundOptions completes o with what the runner takes in either mode:
// the contracts (the sandbox's unless o names them), the pending quote
// references, the confirmations (those
// the transaction manager waits for: --confirmations, 1 in sandbox mode
// and 12 in live mode by default), the horizon of a CONFIRMING deposit
// (the tracker's) and how often it is read (the tracker's first poll),
// and the webhooks' wake-up.
func (a *App) inboundOptions(s *startup, o inboundrun.Options) inboundrun.Options {
	if o.Contracts == nil {
		o.Contracts = s.contracts
	}
	o.PendingRef = a.quotes.tickets.PendingQuoteByRef
	o.Confirmations = s.cfg.Tx.Confirmations
	if o.Confirmations == 0 {
		o.Confirmations = 1
		if s.cfg.Mode == ModeLive {
			o.Confirmations = 12
		}
	}
	o.Horizon = s.cfg.SwapSchedule.Horizon
	if o.Horizon <= 0 {
		o.Horizon = swap.DefaultSchedule().Horizon
	}
	o.Published, o.Owner, o.Logger = a.hooks.Wake, a.inboundOwner(), a.log
	// Step 2: the operator's transactions through the manager, read back
	// from its nodes.
	o.Txs, o.Nodes, o.Poll = a.stepTransactions(), newStepNodes(s.txNodes), stepPoll(s.cfg)
	// A bridge's delivery on 369 is awaited as long as a CONFIRMING
	// deposit's confirmations: the tracker's horizon.
	o.BridgeHorizon = o.Horizon
	// A CONFIRMING deposit's chain is read as often as a tracked swap's
	// provider is first polled.
	o.ConfirmPoll = s.cfg.SwapSchedule.First
	if o.ConfirmPoll <= 0 {
		o.ConfirmPoll = swap.DefaultSchedule().First
	}
	return o
}
