package pulseroute

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

func TestWarpRouteFacts(t *testing.T) {
	c := DefaultContracts()
	want := []uint64{1, 10, 130, 137, 8453, 42161, 43114}
	got := c.SenderChains()
	if len(got) != len(want) {
		t.Fatalf("sender chains %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sender chains %v, want %v", got, want)
		}
		w, ok := c.WarpRoute(want[i])
		if !ok || w.Synthetic || !w.NeedsApproval() || w.Decimals != 6 || w.Domain() != uint32(want[i]) {
			t.Errorf("chain %d: %+v", want[i], w)
		}
		if w.Router == (common.Address{}) || w.Token == (common.Address{}) || w.Router == w.Token {
			t.Errorf("chain %d: router %s token %s", want[i], w.Router, w.Token)
		}
	}
	u := c.USDCh()
	if u.ChainID != quote.PulseChainID || !u.Synthetic || u.NeedsApproval() || u.Router != u.Token ||
		u.Token.Hex() != USDChAddress || u.Decimals != 6 || u.Domain() != 369 {
		t.Errorf("USDCh %+v", u)
	}
	if _, ok := c.WarpRoute(56); ok {
		t.Error("BNB Chain is not on the warp route")
	}
	px := c.PulseX()
	for name, pair := range map[string][2]string{
		"router":  {px.Router.Hex(), PulseXRouterAddress},
		"factory": {px.Factory.Hex(), PulseXFactoryAddr},
		"wpls":    {px.WPLS.Hex(), WPLSAddress},
	} {
		// Hex() is EIP-55: equal strings also prove the constants' checksums.
		if pair[0] != pair[1] {
			t.Errorf("%s %s, want %s", name, pair[0], pair[1])
		}
	}
}

// The warp-route tokens must be the tokens the registry knows, so that a
// quote for registry USDC finds its route.
func TestWarpRouteTokensMatchRegistry(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatalf("load registry: %v", err)
	}
	c := DefaultContracts()
	for _, id := range append(c.SenderChains(), quote.PulseChainID) {
		w, _ := c.WarpRoute(id)
		tok, ok := reg.Token(id, w.Token.Hex())
		if !ok {
			t.Errorf("chain %d: registry has no token %s", id, w.Token.Hex())
			continue
		}
		if tok.Decimals != w.Decimals {
			t.Errorf("chain %d: registry decimals %d, warp route %d", id, tok.Decimals, w.Decimals)
		}
		if !c.IsBridgeToken(id, common.HexToAddress(tok.Address)) {
			t.Errorf("chain %d: IsBridgeToken false for %s", id, tok.Address)
		}
	}
}

func TestSandboxAddresses(t *testing.T) {
	c := DefaultContracts()
	seen := map[common.Address]string{}
	for _, id := range c.SenderChains() {
		in, ok1 := c.InboundReceiver(id)
		snd, ok2 := c.SenderContract(id)
		if !ok1 || !ok2 {
			t.Fatalf("chain %d: missing defaults", id)
		}
		if in != SandboxAddress(LabelInboundReceiver, id) || snd != SandboxAddress(LabelSenderContract, id) {
			t.Errorf("chain %d: defaults are not the sandbox derivation", id)
		}
		for _, a := range []common.Address{in, snd} {
			if a == (common.Address{}) {
				t.Errorf("chain %d: zero address", id)
			}
			if prev, dup := seen[a]; dup {
				t.Errorf("chain %d: %s already used by %s", id, a, prev)
			}
			seen[a] = "chain"
		}
	}
	if SandboxAddress(LabelInboundReceiver, 1) != SandboxAddress(LabelInboundReceiver, 1) {
		t.Error("SandboxAddress is not deterministic")
	}
	if _, ok := c.InboundReceiver(quote.PulseChainID); ok {
		t.Error("PulseChain has no inbound receiver")
	}
}

func TestNewContractsConfig(t *testing.T) {
	custom := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	c, err := NewContracts(Config{
		InboundReceivers: map[uint64]common.Address{8453: custom},
		SenderContracts:  map[uint64]common.Address{1: custom},
	})
	if err != nil {
		t.Fatalf("NewContracts: %v", err)
	}
	if a, _ := c.InboundReceiver(8453); a != custom {
		t.Errorf("inbound 8453 = %s", a)
	}
	if a, _ := c.InboundReceiver(1); a != SandboxAddress(LabelInboundReceiver, 1) {
		t.Errorf("inbound 1 lost its default: %s", a)
	}
	if a, _ := c.SenderContract(1); a != custom {
		t.Errorf("sender 1 = %s", a)
	}
	bad := []Config{
		{InboundReceivers: map[uint64]common.Address{56: custom}},
		{SenderContracts: map[uint64]common.Address{quote.PulseChainID: custom}},
		{SenderContracts: map[uint64]common.Address{1: {}}},
	}
	for i, cfg := range bad {
		if _, err := NewContracts(cfg); err == nil {
			t.Errorf("config %d accepted", i)
		}
	}
	if _, err := Domain(1 << 33); err == nil {
		t.Error("Domain accepted a chain id beyond uint32")
	}
	if d, err := Domain(369); err != nil || d != 369 {
		t.Errorf("Domain(369) = %d, %v", d, err)
	}
}
