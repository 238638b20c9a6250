package edge

import (
	"encoding/json"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// connections answers GET /v1/connections with the chain pairs the tool
// catalog connects, filtered by fromChain, toChain, fromToken and toToken.
// Chain-only filters are served from bytes encoded once per pair; a token
// filter narrows the token lists to that token and drops pairs without it.
func (s *Server) connections(r *Request) error {
	var from, to *registry.Chain
	var err *apierr.Error
	if v, ok := query(r, "fromChain"); ok && v != "" {
		if from, err = s.chainParam("fromChain", v); err != nil {
			return err
		}
	}
	if v, ok := query(r, "toChain"); ok && v != "" {
		if to, err = s.chainParam("toChain", v); err != nil {
			return err
		}
	}
	fromToken, _ := query(r, "fromToken")
	toToken, _ := query(r, "toToken")
	if fromToken != "" && from != nil {
		if err = tokenParam("fromToken", fromToken, from); err != nil {
			return err
		}
	}
	if toToken != "" && to != nil {
		if err = tokenParam("toToken", toToken, to); err != nil {
			return err
		}
	}
	var key [2]uint64
	if from != nil {
		key[0] = from.ID
	}
	if to != nil {
		key[1] = to.ID
	}
	if fromToken == "" && toToken == "" {
		b, ok := s.ref.connByPair.Load(key)
		s.ref.connStats.count(ok)
		if ok {
			writeRaw(r, statusOK, b.([]byte))
			return nil
		}
	}
	out := make([]connection, 0, 8)
	for _, c := range s.ref.connections {
		if (key[0] != 0 && c.FromChainID != key[0]) || (key[1] != 0 && c.ToChainID != key[1]) {
			continue
		}
		if fromToken != "" {
			if c.FromTokens = matchToken(c.FromTokens, fromToken); c.FromTokens == nil {
				continue
			}
		}
		if toToken != "" {
			if c.ToTokens = matchToken(c.ToTokens, toToken); c.ToTokens == nil {
				continue
			}
		}
		out = append(out, c)
	}
	b, encErr := json.Marshal(map[string]any{"connections": out})
	if encErr != nil {
		return encErr
	}
	if fromToken == "" && toToken == "" {
		s.ref.connByPair.Store(key, b)
	}
	writeRaw(r, statusOK, b)
	return nil
}

// matchToken keeps the token with that address (or the native token for the
// word "native"), or returns nil.
func matchToken(list []tokenRef, addr string) []tokenRef {
	for i, t := range list {
		if strings.EqualFold(t.Address, addr) || (strings.EqualFold(addr, "native") && i == 0) {
			return []tokenRef{t}
		}
	}
	return nil
}
