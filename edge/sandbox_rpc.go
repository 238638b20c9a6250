package edge

import (
	"context"
	"math/big"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// SandboxNode is the sandbox chains as Ethereum JSON-RPC nodes, and the
// knob of their fee market; the sandbox chains' owner
// (actors/sandboxchain.Service) satisfies it. The edge only moves bytes:
// the mapping of JSON-RPC to the chains is the owner's.
type SandboxNode interface {
	// JSONRPC answers a JSON-RPC 2.0 body (one request or a batch) for a
	// sandbox chain; nil is no answer (notifications alone). Every error,
	// the chain's refusals included, is a JSON-RPC error in the answer.
	JSONRPC(ctx context.Context, chainID uint64, body []byte) []byte
	// SetBaseFee sets a sandbox chain's base fee per gas, in wei,
	// recorded like a transaction; what waited for the fee to fall is
	// mined.
	SetBaseFee(ctx context.Context, chainID uint64, fee *big.Int) error
}

// MaxBaseFee bounds POST /v1/sandbox/gas's baseFeePerGas: 2^64-1 wei, as
// a block header's base fee fits a node's quantity of 64 bits.
const MaxBaseFee = ^uint64(0)

// sandboxNodeRoutes registers the sandbox chains' nodes and the base-fee
// knob (sandbox mode, with Deps.SandboxNode). Choices where the
// specification is silent:
//   - POST /rpc/{chainId} is outside /v1 and outside the API document, as
//     /logos/ is: it answers JSON-RPC 2.0 for Ethereum clients, not the
//     envelope. Its body is the JSON-RPC request as sent (no Content-Type
//     check: clients differ). A chain id that is not a sandbox chain is
//     refused before JSON-RPC, in the envelope, INVALID_PARAMS naming
//     chainId; everything after that is a JSON-RPC answer with status 200.
//   - It counts against the read bucket: a wallet polls, and a send it
//     carries is one transaction as a broadcast is.
//   - POST /v1/sandbox/gas is a heavy, idempotent change like the faucet.
func (s *Server) sandboxNodeRoutes() {
	s.Handle("POST", "/rpc/{chainId}", route{bucket: BucketRead, name: "sandbox-rpc"}, s.sandboxRPC)
	s.Handle("POST", "/v1/sandbox/gas", route{bucket: BucketHeavy, name: "sandbox-gas", idempotent: true}, s.sandboxGas)
}

// sandboxRPC answers POST /rpc/{chainId}: the body handed to the chain's
// node and its answer written back as application/json.
func (s *Server) sandboxRPC(r *Request) error {
	raw, _ := r.Ctx.UserValue("chainId").(string)
	id, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || id == 0 {
		return apierr.Param("chainId", "chainId must be a chain ID (a positive integer)").With("value", truncateValue(raw))
	}
	if _, aerr := s.sandboxChainParam("chainId", id); aerr != nil {
		return aerr
	}
	out := s.deps.SandboxNode.JSONRPC(r.Context(), id, r.Ctx.PostBody())
	r.Ctx.SetStatusCode(statusOK)
	r.Ctx.Response.Header.SetContentTypeBytes(contentTypeJSON)
	r.Ctx.Response.Header.SetBytesKV(headerRequestID, r.ID[:])
	r.Ctx.Response.SetBody(out)
	return nil
}

// gasBody is POST /v1/sandbox/gas's body.
type gasBody struct {
	ChainID       *uint64 `json:"chainId"`
	BaseFeePerGas *string `json:"baseFeePerGas"`
}

// gasView is its answer.
type gasView struct {
	ChainID       uint64 `json:"chainId"`
	BaseFeePerGas string `json:"baseFeePerGas"`
}

// sandboxGas answers POST /v1/sandbox/gas {chainId, baseFeePerGas}: it
// sets the sandbox chain's base fee per gas (wei, a decimal string from 0
// to 2^64-1), recorded like a transaction so that it survives a restart.
// A signed transaction whose max fee per gas is below the base fee waits
// until the fee falls or a replacement with fees raised by at least 10%
// takes its place: this is how a stuck transaction is made on demand.
// Lowering the fee mines what waited for it. The answer is {chainId,
// baseFeePerGas}. Refusals: INVALID_PARAMS naming chainId or
// baseFeePerGas.
func (s *Server) sandboxGas(r *Request) error {
	var body gasBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.ChainID == nil {
		return apierr.Param("chainId", "chainId is required")
	}
	if _, aerr := s.sandboxChainParam("chainId", *body.ChainID); aerr != nil {
		return aerr
	}
	if body.BaseFeePerGas == nil || *body.BaseFeePerGas == "" {
		return apierr.Param("baseFeePerGas", "baseFeePerGas is required: wei as a decimal string")
	}
	v := *body.BaseFeePerGas
	fee, err := strconv.ParseUint(v, 10, 64)
	if err != nil || strings.Trim(v, "0123456789") != "" {
		return apierr.Param("baseFeePerGas", "baseFeePerGas must be wei as a decimal string from 0 to "+strconv.FormatUint(MaxBaseFee, 10)).
			With("value", truncateValue(v))
	}
	if err := s.deps.SandboxNode.SetBaseFee(r.Context(), *body.ChainID, new(big.Int).SetUint64(fee)); err != nil {
		return sandboxError(err, "chainId")
	}
	writeJSON(r, statusOK, gasView{ChainID: *body.ChainID, BaseFeePerGas: strconv.FormatUint(fee, 10)})
	return nil
}
