package oneclick

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/swapgate/swapgate/routing/domain/prices"
)

// listReuse is how long one fetched /v0/tokens list answers every chain:
// the list covers them all, and the chains' refreshers ask within moments
// of each other, so one fetch serves a whole round.
const listReuse = 2 * time.Second

// PriceSource reads live USD prices from 1Click's token list: GET
// /v0/tokens answers [{assetId, decimals, blockchain, symbol, price,
// priceUpdatedAt, contractAddress}], price a number in USD and
// priceUpdatedAt an RFC 3339 time, which is when the price counts as
// observed. A registry token is matched to its entry by its asset id (the
// list's own blockchain and contract address first, else AssetID's rules);
// an entry without a readable priceUpdatedAt, or whose price is not above
// zero, prices nothing, since its age could not be judged.
type PriceSource struct {
	c   *Client
	now func() time.Time

	mu        sync.Mutex
	byAsset   map[string]TokenInfo
	table     *AssetTable
	fetchedAt time.Time
}

var _ prices.Source = (*PriceSource)(nil)

// PriceSource returns the client's price source; now is the clock of its
// list reuse (time.Now when nil).
func (c *Client) PriceSource(now func() time.Time) *PriceSource {
	if now == nil {
		now = time.Now
	}
	return &PriceSource{c: c, now: now}
}

// Prices prices the chain's registry tokens from the list. A chain 1Click
// does not reach has no prices here, without a request.
func (s *PriceSource) Prices(ctx context.Context, chainID uint64) (map[string]prices.Price, error) {
	chain, ok := s.c.reg.Chain(chainID)
	if !ok {
		return nil, fmt.Errorf("oneclick: prices of chain %d: %w", chainID, prices.ErrUnknownChain)
	}
	if chain.IntentsBlockchain == "" {
		return map[string]prices.Price{}, nil
	}
	byAsset, table, err := s.list(ctx)
	if err != nil {
		return nil, fmt.Errorf("oneclick: prices of chain %d: %w", chainID, err)
	}
	out := make(map[string]prices.Price)
	for _, tok := range s.c.reg.Tokens(chainID) {
		contract := tok.Address
		if isNative(chain, tok) {
			contract = ""
		}
		id, ok := table.Lookup(chain.IntentsBlockchain, contract)
		if !ok {
			if id, err = AssetID(chain, tok); err != nil {
				continue
			}
		}
		info, ok := byAsset[id]
		if !ok || math.IsNaN(info.Price) || math.IsInf(info.Price, 0) || info.Price <= 0 {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, info.PriceUpdatedAt)
		if err != nil {
			continue
		}
		out[strings.ToLower(tok.Address)] = prices.Price{USD: info.Price, ObservedAt: at}
	}
	return out, nil
}

// list returns the token list indexed by asset id and as an AssetTable,
// fetching it when the one held is older than listReuse.
func (s *PriceSource) list(ctx context.Context) (map[string]TokenInfo, *AssetTable, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byAsset != nil && s.now().Sub(s.fetchedAt) < listReuse {
		return s.byAsset, s.table, nil
	}
	list, err := s.c.Tokens(ctx)
	if err != nil {
		return nil, nil, err
	}
	byAsset := make(map[string]TokenInfo, len(list))
	for _, t := range list {
		if _, dup := byAsset[t.AssetID]; !dup && t.AssetID != "" {
			byAsset[t.AssetID] = t
		}
	}
	s.byAsset, s.table, s.fetchedAt = byAsset, NewAssetTable(list), s.now()
	return s.byAsset, s.table, nil
}
