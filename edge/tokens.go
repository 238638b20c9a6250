package edge

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// tokens answers GET /v1/tokens: data.tokens maps chain id strings to token
// arrays. Parameters: chains (comma-separated ids; default every chain),
// search (case-insensitive substring of symbol, name or address), chainTypes
// (comma-separated EVM, SVM, UTXO, MVM, INTENTS), minPriceUSD (a finite
// non-negative number), and limit (at most that many tokens per chain);
// search is at most 256 bytes of printable UTF-8. Without filters the per-chain arrays
// are served from pre-encoded bytes.
func (s *Server) tokens(r *Request) error {
	chains := s.deps.Registry.Chains()
	if v, ok := query(r, "chains"); ok && v != "" {
		var err *apierr.Error
		if chains, err = s.chainListParam("chains", v); err != nil {
			return err
		}
	}
	var f tokenFilter
	if v, ok := query(r, "chainTypes"); ok && v != "" {
		f.types = make(map[registry.ChainType]bool)
		for _, t := range strings.Split(v, ",") {
			ct := registry.ChainType(strings.ToUpper(strings.TrimSpace(t)))
			switch ct {
			case registry.EVM, registry.SVM, registry.UTXO, registry.MVM, registry.Intents:
				f.types[ct] = true
			default:
				return apierr.Param("chainTypes", "unknown chain type "+t+"; one of EVM, SVM, UTXO, MVM, INTENTS").With("value", t)
			}
		}
	}
	if v, ok := query(r, "search"); ok && v != "" {
		if err := textParam("search", v, maxSearchLen); err != nil {
			return err
		}
		f.search = strings.ToLower(v)
	}
	if v, ok := query(r, "minPriceUSD"); ok && v != "" {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
			return apierr.Param("minPriceUSD", "minPriceUSD must be a non-negative number").With("value", v)
		}
		f.minPrice, f.hasMinPrice = p, true
	}
	if v, ok := query(r, "limit"); ok {
		n, err := positiveIntParam("limit", v)
		if err != nil {
			return err
		}
		f.limit = n
	}

	beginData(r, statusOK)
	r.buf = append(r.buf, `{"tokens":{`...)
	first := true
	for _, ch := range chains {
		if f.types != nil && !f.types[ch.ChainType] {
			continue
		}
		var arr []byte
		var err error
		if f.plain() {
			arr, err = s.ref.tokenArray(ch.ID)
		} else {
			arr, err = s.filteredTokens(ch.ID, &f)
		}
		if err != nil {
			return err
		}
		if arr == nil {
			continue
		}
		if !first {
			r.buf = append(r.buf, ',')
		}
		first = false
		r.buf = append(r.buf, '"')
		r.buf = strconv.AppendUint(r.buf, ch.ID, 10)
		r.buf = append(r.buf, `":`...)
		r.buf = append(r.buf, arr...)
	}
	r.buf = append(r.buf, `}}`...)
	endData(r)
	return nil
}

// maxSearchLen bounds the search term: longer than any symbol, name or
// address (a Sui coin type included) it could match.
const maxSearchLen = 256

type tokenFilter struct {
	types       map[registry.ChainType]bool
	search      string
	minPrice    float64
	hasMinPrice bool
	limit       int
}

// plain reports whether no per-token filter applies.
func (f *tokenFilter) plain() bool { return f.search == "" && !f.hasMinPrice && f.limit == 0 }

// filteredTokens encodes the tokens of one chain that pass the filter, or
// returns nil when none does.
func (s *Server) filteredTokens(chainID uint64, f *tokenFilter) ([]byte, error) {
	snap, _ := s.deps.RefData.Prices(chainID)
	var list []tokenJSON
	for _, t := range s.deps.Registry.Tokens(chainID) {
		if f.limit > 0 && len(list) >= f.limit {
			break
		}
		if f.search != "" && !strings.Contains(strings.ToLower(t.Symbol), f.search) &&
			!strings.Contains(strings.ToLower(t.Name), f.search) &&
			!strings.Contains(strings.ToLower(t.Address), f.search) {
			continue
		}
		tj := s.ref.tokenJSON(t, snap)
		if f.hasMinPrice {
			p, err := strconv.ParseFloat(tj.PriceUSD, 64)
			if err != nil || p < f.minPrice {
				continue
			}
		}
		list = append(list, tj)
	}
	if len(list) == 0 {
		return nil, nil
	}
	return json.Marshal(list)
}
