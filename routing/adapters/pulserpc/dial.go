package pulserpc

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// nodeConns is how many connections to one node a reader keeps open and
// idle. Every quote leg that reads a chain makes an eth_call, and a call
// holds its connection for the node's whole answer time, so at 2,000
// quotes/s and a 200 ms node some hundreds are in use at once. go-ethereum's
// default HTTP client (net/http's default transport) keeps only two idle
// connections per host: every other call would then open, and close, a
// connection of its own (a TCP and TLS handshake per quote, and thousands of
// sockets left in TIME_WAIT a second).
const nodeConns = 1024

// dialNode connects go-ethereum's client to a JSON-RPC URL over an HTTP
// client that keeps up to nodeConns connections to the node alive;
// WebSocket and IPC URLs are dialled as go-ethereum dials them.
func dialNode(ctx context.Context, url string) (*ethclient.Client, error) {
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        nodeConns,
		MaxIdleConnsPerHost: nodeConns,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	c, err := rpc.DialOptions(ctx, url, rpc.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		return nil, err
	}
	return ethclient.NewClient(c), nil
}

// DialReserves connects to chain 369's node at url for a Reserves (see
// NewReserves): a connection of its own, so that the snapshot's reads never
// queue behind the quotes' eth_calls.
func DialReserves(ctx context.Context, url string, contracts *pulseroute.Contracts, wanted []pulseroute.Pair, next pulseroute.ChainState, cfg ReservesConfig) (*Reserves, error) {
	c, err := dialNode(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("pulseroute reserves on chain %d: %w", quote.PulseChainID, err)
	}
	r := NewReserves(c.Client(), url, contracts, wanted, next, cfg)
	r.owned = true
	return r, nil
}
