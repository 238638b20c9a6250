package pulserpc

import (
	"context"
	"errors"
	"math/big"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// wsNode is a WebSocket node of chain 369 with one PulseX pair
// (USDCh/WPLS): eth_blockNumber, eth_call of getPair, token0 and
// getReserves, and newHeads subscriptions that carry the heads a test
// announces. With refuse set it takes no subscription.
type wsNode struct {
	pair   common.Address
	refuse bool

	mu       sync.Mutex
	block    uint64
	reserves [2]*big.Int // token0's (WPLS), token1's (USDCh)
	polls    int
	subs     []*rpc.Subscription
	notifier []*rpc.Notifier
}

// ethService is the node's eth namespace.
type ethService struct{ n *wsNode }

func (s ethService) BlockNumber() hexutil.Uint64 {
	s.n.mu.Lock()
	defer s.n.mu.Unlock()
	s.n.polls++
	return hexutil.Uint64(s.n.block)
}

func (s ethService) Call(args map[string]any, _ string) (hexutil.Bytes, error) {
	to, _ := args["to"].(string)
	input, _ := args["input"].(string)
	data := hexutil.MustDecode(input)
	contracts := pulseroute.DefaultContracts()
	m, err := pulseroute.ABI().MethodById(data[:4])
	if err != nil {
		return nil, err
	}
	s.n.mu.Lock()
	defer s.n.mu.Unlock()
	switch {
	case m.Name == pulseroute.MethodGetPair && strings.EqualFold(to, contracts.PulseX().Factory.Hex()):
		return m.Outputs.Pack(s.n.pair)
	case m.Name == pulseroute.MethodToken0 && strings.EqualFold(to, s.n.pair.Hex()):
		return m.Outputs.Pack(contracts.PulseX().WPLS)
	case m.Name == pulseroute.MethodGetReserves && strings.EqualFold(to, s.n.pair.Hex()):
		return m.Outputs.Pack(s.n.reserves[0], s.n.reserves[1], uint32(0))
	}
	return nil, errors.New("execution reverted")
}

func (s ethService) NewHeads(ctx context.Context) (*rpc.Subscription, error) {
	if s.n.refuse {
		return nil, errors.New("subscriptions are off")
	}
	n, ok := rpc.NotifierFromContext(ctx)
	if !ok {
		return nil, rpc.ErrNotificationsUnsupported
	}
	sub := n.CreateSubscription()
	s.n.mu.Lock()
	s.n.subs, s.n.notifier = append(s.n.subs, sub), append(s.n.notifier, n)
	s.n.mu.Unlock()
	return sub, nil
}

// head moves the pool and the head, and announces the head.
func (n *wsNode) head(wpls, usdch int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.block++
	n.reserves = [2]*big.Int{new(big.Int).Mul(big.NewInt(wpls), big.NewInt(1e18)), big.NewInt(usdch * 1e6)}
	h := &types.Header{Number: new(big.Int).SetUint64(n.block), Difficulty: big.NewInt(0)}
	for i, sub := range n.subs {
		_ = n.notifier[i].Notify(sub.ID, h)
	}
}

func (n *wsNode) pollCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.polls
}

func startWSNode(t *testing.T, refuse bool) (*wsNode, *httptest.Server) {
	t.Helper()
	n := &wsNode{pair: common.HexToAddress("0x6753560538ECa67617A9Ce605178F788bE7E524E"), refuse: refuse, block: 100,
		reserves: [2]*big.Int{new(big.Int).Mul(big.NewInt(30_000_000), big.NewInt(1e18)), big.NewInt(1_000_000 * 1e6)}}
	srv := rpc.NewServer()
	if err := srv.RegisterName("eth", ethService{n}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.WebsocketHandler([]string{"*"}))
	t.Cleanup(func() {
		ts.Close()
		srv.Stop()
	})
	return n, ts
}

// TestReservesFollowNewHeads runs the reader against a WebSocket node:
// subscribed to newHeads, it reads the reserves again at every announced
// head without polling eth_blockNumber; when the subscription goes quiet
// (no head for ten poll periods, no error either) it polls, and sees the
// next move; a node that refuses the subscription is polled from the
// start.
func TestReservesFollowNewHeads(t *testing.T) {
	contracts := pulseroute.DefaultContracts()
	path := []common.Address{contracts.USDCh().Token, contracts.PulseX().WPLS}
	wanted := []pulseroute.Pair{{A: contracts.PulseX().WPLS, B: contracts.USDCh().Token}}
	ctx := context.Background()
	oneUSDCh := big.NewInt(1_000_000)
	priced := func(t *testing.T, res *Reserves, wpls, usdch int64) {
		t.Helper()
		want := pulseroute.AmountOut(oneUSDCh, big.NewInt(usdch*1e6), new(big.Int).Mul(big.NewInt(wpls), big.NewInt(1e18)))
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, err := res.AmountsOut(ctx, oneUSDCh, path)
			if err == nil && got[1].Cmp(want) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("1 USDCh buys %v (%v), want %s WPLS", got, err, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// next is never asked while the snapshot holds the path.
	next := fixedState{payment: 1, out: 1}

	t.Run("subscribed, then dropped", func(t *testing.T) {
		node, srv := startWSNode(t, false)
		url := "ws" + strings.TrimPrefix(srv.URL, "http")
		res, err := DialReserves(ctx, url, contracts, wanted, next, ReservesConfig{MaxAge: time.Minute, Poll: 50 * time.Millisecond, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(res.Start(ctx))
		priced(t, res, 30_000_000, 1_000_000)
		deadline := time.Now().Add(10 * time.Second)
		for {
			node.mu.Lock()
			subscribed := len(node.subs) > 0
			node.mu.Unlock()
			if subscribed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no newHeads subscription")
			}
			time.Sleep(5 * time.Millisecond)
		}
		node.head(20_000_000, 1_500_000)
		priced(t, res, 20_000_000, 1_500_000)
		polls := node.pollCount()
		time.Sleep(100 * time.Millisecond) // two poll periods, a fifth of the quiet time
		if n := node.pollCount() - polls; n != 0 {
			t.Errorf("subscribed, the reader polled eth_blockNumber %d times", n)
		}
		// The subscription goes quiet while the chain moves on.
		node.mu.Lock()
		node.subs, node.notifier = nil, nil
		node.block++
		node.reserves = [2]*big.Int{new(big.Int).Mul(big.NewInt(25_000_000), big.NewInt(1e18)), big.NewInt(1_200_000 * 1e6)}
		node.mu.Unlock()
		priced(t, res, 25_000_000, 1_200_000)
	})

	t.Run("refused", func(t *testing.T) {
		node, srv := startWSNode(t, true)
		url := "ws" + strings.TrimPrefix(srv.URL, "http")
		res, err := DialReserves(ctx, url, contracts, wanted, next, ReservesConfig{MaxAge: time.Minute, Poll: 20 * time.Millisecond, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(res.Start(ctx))
		priced(t, res, 30_000_000, 1_000_000)
		node.head(10_000_000, 2_000_000)
		priced(t, res, 10_000_000, 2_000_000)
		if node.pollCount() == 0 {
			t.Error("a node without subscriptions was never polled")
		}
	})
}
