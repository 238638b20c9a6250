package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// partner is a partner account the suite created through the CLI.
type partner struct {
	ID     string `json:"id"`
	APIKey string `json:"-"`
	FeeBps int    `json:"swapFeeBps"`
}

// unlimited is the per-minute limit the suite gives its partners (and the
// anonymous buckets): far above any rate it offers, so that a 429 is never
// what a figure measures.
const unlimited = 1_000_000_000

// cli runs `swapgate ARGS...` with the extra environment env (the
// server's SWAPGATE_STORE) and returns its stdout; the partner commands
// reach a running server through the admin listener file in its data
// directory, as an operator's would.
func cli(ctx context.Context, bin string, env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = childEnv(env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("swapgate %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// createPartner provisions a partner as an operator would: create, then
// raise its limits, then set its swap fee, each through the CLI run with
// the server's extra environment env.
func createPartner(ctx context.Context, bin string, env []string, dataDir, name string, feeBps int) (partner, error) {
	out, err := cli(ctx, bin, env, "partner", "create", "--data", dataDir, "--name", name, "--email", name+"@bench.invalid")
	if err != nil {
		return partner{}, err
	}
	var created struct {
		ID     string `json:"id"`
		APIKey string `json:"apiKey"`
	}
	if err := json.Unmarshal(out, &created); err != nil || created.ID == "" || created.APIKey == "" {
		return partner{}, fmt.Errorf("partner create: unexpected output %q (%v)", out, err)
	}
	lim := strconv.Itoa(unlimited)
	if _, err := cli(ctx, bin, env, "partner", "set-limits", "--data", dataDir, "--id", created.ID, "--heavy", lim, "--read", lim); err != nil {
		return partner{}, err
	}
	if _, err := cli(ctx, bin, env, "partner", "set-fees", "--data", dataDir, "--id", created.ID, "--swap-fee-bps", strconv.Itoa(feeBps)); err != nil {
		return partner{}, err
	}
	return partner{ID: created.ID, APIKey: created.APIKey, FeeBps: feeBps}, nil
}

// api is a small JSON client of one Swapgate, for provisioning and checks.
type api struct {
	base   string
	client *http.Client
}

func newAPI(base string) *api {
	return &api{base: base, client: &http.Client{Timeout: 30 * time.Second}}
}

// do sends one request and decodes the envelope's data into out; a
// non-2xx answer or an envelope error is an error naming both.
func (a *api) do(ctx context.Context, method, path, key string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	var env struct {
		Data  json.RawMessage `json:"data"`
		Error *struct {
			Code, Message string
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: %d, not the envelope: %.200s", method, path, resp.StatusCode, raw)
	}
	if resp.StatusCode/100 != 2 || env.Error != nil {
		return fmt.Errorf("%s %s: %d %.300s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("%s %s: decode data: %w", method, path, err)
		}
	}
	return nil
}

// feeWallets are real-format addresses, one per fee ecosystem, so that a
// partner with a fee has a wallet wherever its quotes earn.
func feeWallets() [][2]string {
	return [][2]string{
		{"evm", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		{"solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"},
		{"near", "partner.near"},
		{"bitcoin", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"},
		{"sui", "0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7"},
	}
}

// registerFeeWallets registers a fee wallet for every ecosystem over HTTP,
// as a partner does.
func registerFeeWallets(ctx context.Context, a *api, key string) error {
	for _, w := range feeWallets() {
		if err := a.do(ctx, http.MethodPut, "/v1/partner/me/fee-wallets", key, map[string]string{"ecosystem": w[0], "address": w[1]}, nil); err != nil {
			return err
		}
	}
	return nil
}

// createWebhook registers url for swap.completed (the test event's type)
// with secret, and returns the webhook's id.
func createWebhook(ctx context.Context, a *api, key, url, secret string) (string, error) {
	var hook struct {
		ID string `json:"id"`
	}
	err := a.do(ctx, http.MethodPost, "/v1/partner/webhooks", key,
		map[string]any{"url": url, "events": []string{"swap.completed"}, "secret": secret}, &hook)
	if err == nil && hook.ID == "" {
		err = fmt.Errorf("webhook created without an id")
	}
	return hook.ID, err
}

// Addresses and tokens of the sandbox swaps the status polls follow.
const (
	swapWallet   = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	usdcArbitrum = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	usdcBase     = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
)

// makeSwaps runs n real sandbox swaps (USDC Arbitrum to Base) as the
// README's walkthrough does: top the wallet up, quote with the partner's
// key, approve, broadcast, report with POST /v1/execute. Their transaction
// hashes are what the mixed scenario's status polls follow.
func makeSwaps(ctx context.Context, a *api, key string, n int) ([]string, error) {
	total := big.NewInt(int64(n) * 200_000_000)
	if err := a.do(ctx, http.MethodPost, "/v1/sandbox/faucet", key,
		map[string]any{"chainId": 42161, "address": swapWallet, "token": usdcArbitrum, "amount": total.String()}, nil); err != nil {
		return nil, err
	}
	var hashes []string
	for i := range n {
		amount := strconv.Itoa(100_000_000 + i*1_000_000)
		var q struct {
			Quote struct {
				ID       string `json:"id"`
				Estimate struct {
					ApprovalAddress *string `json:"approvalAddress"`
				} `json:"estimate"`
				TransactionRequest json.RawMessage `json:"transactionRequest"`
			} `json:"quote"`
		}
		path := "/v1/quote?fromChain=42161&toChain=8453&fromToken=" + usdcArbitrum + "&toToken=" + usdcBase +
			"&fromAmount=" + amount + "&fromAddress=" + swapWallet + "&toAddress=" + swapWallet
		if err := a.do(ctx, http.MethodGet, path, key, nil, &q); err != nil {
			return nil, err
		}
		if q.Quote.ID == "" || q.Quote.Estimate.ApprovalAddress == nil || len(q.Quote.TransactionRequest) == 0 {
			return nil, fmt.Errorf("swap %d: quote lacks id, approval address or transaction", i)
		}
		amt, _ := new(big.Int).SetString(amount, 10)
		approveData, err := simchain.ApproveCalldata(common.HexToAddress(*q.Quote.Estimate.ApprovalAddress), amt)
		if err != nil {
			return nil, fmt.Errorf("swap %d: approve calldata: %w", i, err)
		}
		approve := hexutil.Encode(approveData)
		var sent struct {
			TxHash string `json:"txHash"`
			Status string `json:"status"`
		}
		if err := a.do(ctx, http.MethodPost, "/v1/sandbox/broadcast", key, map[string]any{"chainId": 42161, "from": swapWallet,
			"transactionRequest": map[string]string{"to": usdcArbitrum, "data": approve}}, &sent); err != nil {
			return nil, err
		}
		if sent.Status != "success" {
			return nil, fmt.Errorf("swap %d: approval %s", i, sent.Status)
		}
		if err := a.do(ctx, http.MethodPost, "/v1/sandbox/broadcast", key, map[string]any{"chainId": 42161, "from": swapWallet,
			"transactionRequest": q.Quote.TransactionRequest}, &sent); err != nil {
			return nil, err
		}
		if sent.Status != "success" {
			return nil, fmt.Errorf("swap %d: broadcast %s", i, sent.Status)
		}
		if err := a.do(ctx, http.MethodPost, "/v1/execute", key, map[string]string{"quoteId": q.Quote.ID, "txHash": sent.TxHash}, nil); err != nil {
			return nil, err
		}
		hashes = append(hashes, sent.TxHash)
	}
	return hashes, nil
}

// preflight sends each distinct request of a scenario once and fails on
// the first that is not a 2xx envelope: a benchmark of error answers
// measures nothing, and a pair that stopped being served must be noticed
// before the run rather than read as a fast error rate.
// The checks run a few at a time: the slow-provider scenario's requests
// each wait for the quote deadline.
func preflight(ctx context.Context, a *api, key, method string, paths []string) error {
	const parallel = 8
	errs := make([]error, len(paths))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := a.do(ctx, method, p, key, nil, nil); err != nil {
				errs[i] = fmt.Errorf("preflight: %w", err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// metricsSum reads /metrics and adds up, for each name, the samples of
// the series of that name (any labels).
func (a *api) metricsSum(ctx context.Context, names ...string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d", resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(names))
	for _, line := range strings.Split(string(body), "\n") {
		for _, n := range names {
			if rest, ok := strings.CutPrefix(line, n); ok && (strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ")) {
				if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
					out[n] += v
				}
			}
		}
	}
	return out, nil
}
