package edge

import (
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// gasPrices answers GET /v1/gas-prices?chainId=…: one id gives the record
// as data, several (comma-separated) give data.gasPrices in the order asked
// Records are served from bytes encoded once per change. A chain whose
// record grew older than --gas-max-age (its oracle stopped answering) is
// RPC_FAILURE naming chainId: its figures are not served, and none are made
// up in their place.
func (s *Server) gasPrices(r *Request) error {
	v, ok := query(r, "chainId")
	if !ok || v == "" {
		return apierr.Param("chainId", "chainId is required (one chain ID or several, comma-separated)")
	}
	chains, err := s.chainListParam("chainId", v)
	if err != nil {
		return err
	}
	records := make([][]byte, 0, len(chains))
	for _, c := range chains {
		rec, encErr := s.ref.gasRecord(c.ID)
		if encErr != nil {
			return encErr
		}
		if rec == nil && c.ChainType == registry.EVM && s.ref.ref.GasVersion(c.ID) != 0 {
			// The chain had a record and its oracle has not answered
			// within --gas-max-age: the source failed, not the request.
			return apierr.New(apierr.RPCFailure, "gas prices of chain "+strconv.FormatUint(c.ID, 10)+
				" are not available: its gas source has not answered within the maximum age (--gas-max-age)").With("chainId", c.ID)
		}
		if rec == nil && c.ChainType == registry.EVM {
			// Live mode reads gas from the chain's node only.
			return apierr.Param("chainId", "gas prices are not available for chain "+strconv.FormatUint(c.ID, 10)+
				": no gas source is configured for it (its node, --gas-rpc)").With("value", strconv.FormatUint(c.ID, 10))
		}
		if rec == nil {
			return apierr.Param("chainId", "gas prices are not available for chain "+strconv.FormatUint(c.ID, 10)+
				" ("+string(c.ChainType)+"); they are served for EVM chains").With("value", strconv.FormatUint(c.ID, 10))
		}
		records = append(records, rec)
	}
	if len(records) == 1 && !strings.Contains(v, ",") {
		writeRaw(r, statusOK, records[0])
		return nil
	}
	beginData(r, statusOK)
	r.buf = append(r.buf, `{"gasPrices":[`...)
	for i, rec := range records {
		if i > 0 {
			r.buf = append(r.buf, ',')
		}
		r.buf = append(r.buf, rec...)
	}
	r.buf = append(r.buf, `]}`...)
	endData(r)
	return nil
}
