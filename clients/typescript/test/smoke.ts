// The smoke test of the TypeScript client: a partner's day against a real
// Swapgate in sandbox mode, every API call through the typed client
// (src/client.ts over the generated src/schema.d.ts). It upserts a fee
// wallet, registers a webhook, quotes with a fee, plays the wallet on the
// sandbox chain, executes the swap and follows it to DONE (pushed by the
// status stream, then polled) with its webhooks
// delivered, then prices an on-ramp purchase and opens its checkout. Every
// answer's values are checked, not only its type; the first failure ends
// the run with exit status 1.
//
//   SWAPGATE_BASE_URL        the service, e.g. http://127.0.0.1:8080
//   SWAPGATE_API_KEY         a partner key (pk_live_…) whose swap fee is above 0 bps
//   SWAPGATE_WEBHOOK_URL     an HTTPS receiver the service can deliver to (bin/swapgate webhook-receiver)
//   SWAPGATE_WEBHOOK_SECRET  the secret that receiver checks signatures with
//
// Build and run: npm run smoke (tsc, then node dist/test/smoke.js).

import assert from "node:assert/strict";
import process from "node:process";

import {
  createSwapgateClient,
  streamStatus,
  SwapgateError,
  unwrap,
  type Schemas,
  type StatusStreamEvent,
  type SwapgateClient,
} from "../src/client.js";

// The sandbox's own examples (README: Playing the wallet): USDC from
// Arbitrum to Base, the wallet every sandbox address starts funded as.
const WALLET = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";
const FEE_WALLET = "0x2546BcD3c84621e976D8185a91A922aE77ECEc30";
const ARBITRUM = 42161;
const BASE = 8453;
const USDC_ARBITRUM = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831";
const USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const AMOUNT = 100_000_000n; // 100 USDC

const REQUEST_TIMEOUT_MS = 15_000;
const RUN_TIMEOUT_MS = 120_000;

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === "") {
    throw new Error(`${name} is not set`);
  }
  return v;
}

const baseUrl = env("SWAPGATE_BASE_URL");
const apiKey = env("SWAPGATE_API_KEY");
const webhookUrl = env("SWAPGATE_WEBHOOK_URL");
const webhookSecret = env("SWAPGATE_WEBHOOK_SECRET");

// Every request gives up after REQUEST_TIMEOUT_MS, so that a stuck server
// fails the run rather than hanging it.
const timedFetch = (req: Request): Promise<Response> => fetch(req, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
const partner: SwapgateClient = createSwapgateClient({ baseUrl, apiKey, fetch: timedFetch });
const anonymous: SwapgateClient = createSwapgateClient({ baseUrl, fetch: timedFetch });

const HASH = /^0x[0-9a-f]{64}$/;

/** Base units of a decimal string: units("0.249838", 6) is 249838n. */
function units(decimal: string, decimals: number): bigint {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(decimal);
  assert.ok(m, `${JSON.stringify(decimal)} is not a non-negative decimal`);
  const frac = (m[2] ?? "").padEnd(decimals, "0");
  assert.ok(frac.length === decimals, `${decimal} has more than ${decimals} decimals`);
  return BigInt((m[1] ?? "0") + frac);
}

/** Cents of an on-ramp amount (a JSON number with two decimals). */
function cents(amount: number): number {
  const c = Math.round(amount * 100);
  assert.ok(Math.abs(c - amount * 100) < 1e-6, `${amount} has more than two decimals`);
  return c;
}

function positive(what: string, base: string): bigint {
  assert.match(base, /^\d+$/, `${what} is not base units: ${base}`);
  const v = BigInt(base);
  assert.ok(v > 0n, `${what} is not positive: ${base}`);
  return v;
}

/** ERC-20 approve(spender, amount) calldata. */
function approveCalldata(spender: string, amount: bigint): string {
  assert.match(spender, /^0x[0-9a-fA-F]{40}$/, `spender ${spender}`);
  return "0x095ea7b3" + spender.slice(2).toLowerCase().padStart(64, "0") + amount.toString(16).padStart(64, "0");
}

/** until polls probe every 250 ms until it returns a value, for at most ms. */
async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) {
      return v;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${ms} ms waiting until ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** expectRefusal awaits a call that must fail with that status and code. */
async function expectRefusal(call: Promise<unknown>, status: number, code: Schemas["ErrorCode"]): Promise<SwapgateError> {
  try {
    await call;
  } catch (e) {
    assert.ok(e instanceof SwapgateError, `want a SwapgateError, got ${String(e)}`);
    assert.equal(e.status, status, e.message);
    assert.equal(e.code, code, e.message);
    assert.ok(e.requestId !== undefined && e.requestId !== "", "a refusal names its request");
    return e;
  }
  assert.fail(`want ${status} ${code}, the call succeeded`);
}

const quoteQuery = {
  fromChain: String(ARBITRUM),
  toChain: String(BASE),
  fromToken: USDC_ARBITRUM,
  toToken: USDC_BASE,
  fromAmount: AMOUNT.toString(),
  fromAddress: WALLET,
  toAddress: WALLET,
};

async function main(): Promise<void> {
  // The service, and who we are.
  const ping = await unwrap(anonymous.GET("/v1/ping"));
  assert.equal(ping.status, "ok");
  assert.equal(ping.mode, "sandbox", "the smoke test plays the wallet on the sandbox chain");
  await expectRefusal(unwrap(anonymous.GET("/v1/partner/me")), 401, "UNAUTHORIZED");
  const me = await unwrap(partner.GET("/v1/partner/me"));
  assert.match(me.id, /^ptn_/);
  const feeBps = me.feeTier.swapFeeBps;
  assert.ok(feeBps > 0, `the partner's swap fee is ${feeBps} bps: give it one, so that its fee wallet matters`);
  step("ping and partner", `${me.id}, ${feeBps} bps`);

  // A fee-bearing quote needs a fee wallet where the fee settles: refused
  // without one, answered once it is registered.
  const refused = await expectRefusal(
    unwrap(partner.GET("/v1/quote", { params: { query: quoteQuery } })),
    400,
    "PARTNER_WALLET_NOT_REGISTERED",
  );
  assert.equal(refused.details?.["ecosystem"], "evm");
  const wallet = await unwrap(partner.PUT("/v1/partner/me/fee-wallets", { body: { ecosystem: "evm", address: FEE_WALLET } }));
  assert.deepEqual(wallet, { partnerId: me.id, ecosystem: "evm", address: FEE_WALLET });
  const wallets = await unwrap(partner.GET("/v1/partner/me/fee-wallets"));
  const listed = wallets.wallets.find((w) => w.ecosystem === "evm");
  assert.equal(listed?.address, FEE_WALLET, "the fee wallet is listed");
  step("fee wallet upsert", FEE_WALLET);

  // A webhook for the swap's events.
  const hookAnswer = await partner.POST("/v1/partner/webhooks", {
    body: { url: webhookUrl, events: ["swap.pending", "swap.completed", "swap.failed"], secret: webhookSecret },
  });
  assert.equal(hookAnswer.response.status, 201, "a webhook is created with 201");
  const hook = await unwrap(hookAnswer);
  assert.match(hook.id, /^wh_/);
  assert.equal(hook.url, webhookUrl);
  assert.deepEqual(hook.events, ["swap.pending", "swap.completed", "swap.failed"]);
  assert.equal(hook.active, true);
  assert.ok(!Number.isNaN(Date.parse(hook.createdAt)), `createdAt ${hook.createdAt}`);
  const hooks = await unwrap(partner.GET("/v1/partner/webhooks"));
  assert.ok(
    hooks.webhooks.some((h) => h.id === hook.id),
    "the webhook is listed",
  );
  step("webhook registration", hook.id);

  // The quote, with the partner's fee paid to its wallet.
  const answer = await unwrap(partner.GET("/v1/quote", { params: { query: quoteQuery } }));
  assert.equal(answer.provider, "aggregator");
  assert.equal(answer.feeBps, feeBps, "the quote carries the partner's fee");
  assert.equal(answer.isDryQuote, false);
  const q = answer.quote;
  assert.ok("action" in q, "USDC from Arbitrum to Base is an aggregator route (Shape A)");
  assert.match(q.id, /^qt_/);
  assert.ok(q.expiresAt > Date.now() / 1000, "the quote has not expired");
  assert.equal(q.action.fromChainId, ARBITRUM);
  assert.equal(q.action.toChainId, BASE);
  assert.equal(q.action.fromAmount, AMOUNT.toString());
  assert.equal(q.action.toAddress, WALLET);
  const toAmount = positive("estimate.toAmount", q.estimate.toAmount);
  const toAmountMin = positive("estimate.toAmountMin", q.estimate.toAmountMin);
  assert.ok(toAmountMin <= toAmount && toAmount < AMOUNT, `toAmountMin ${toAmountMin} ≤ toAmount ${toAmount} < ${AMOUNT}`);
  const fee = q.estimate.feeCosts.find((f) => f.name === "Partner fee");
  assert.ok(fee !== undefined, "the quote shows the partner fee");
  positive("the partner fee", fee.amount);
  assert.equal(Number(fee.percentage) * 10_000, feeBps);
  const spender = q.estimate.approvalAddress;
  assert.ok(spender !== null, "a USDC input needs an approval");
  const tx = q.transactionRequest;
  assert.ok(tx !== undefined, "a quote with toAddress carries its transaction");
  // From an EVM source it is an EVM call (a Solana or Sui source's is its
  // serialized transaction, with encoding and no to).
  assert.ok("to" in tx, "an EVM source's transaction is an EVM call");
  assert.equal(tx.chainId, ARBITRUM);
  assert.ok(
    tx.data.toLowerCase().includes(FEE_WALLET.slice(2).toLowerCase()),
    "the transaction pays the partner fee to the registered fee wallet",
  );
  step("quote", `${q.id}: ${q.tool}, ${toAmount} out, fee ${fee.amount}`);

  // What to sign, then the wallet: approve the spender, send the swap.
  const next = await unwrap(partner.POST("/v1/execute", { body: { quoteId: q.id } }));
  assert.equal(next.kind, "transaction");
  assert.equal(next.quoteId, q.id);
  assert.equal(next.approvalAddress, spender);
  assert.equal(next.transactionRequests?.length, 1);
  const signed = next.transactionRequests?.[0];
  assert.ok(signed !== undefined && "to" in signed, "an EVM source's transaction is an EVM call");
  assert.equal(signed.to, tx.to);
  assert.equal(signed.data, tx.data);
  assert.equal(next.status, undefined, "nothing is tracked before a txHash");

  const approval = await unwrap(
    partner.POST("/v1/sandbox/broadcast", {
      body: { chainId: ARBITRUM, from: WALLET, transactionRequest: { to: USDC_ARBITRUM, data: approveCalldata(spender, AMOUNT) } },
    }),
  );
  assert.equal(approval.status, "success", `approval reverted: ${approval.revertReason ?? ""}`);
  const sent = await unwrap(partner.POST("/v1/sandbox/broadcast", { body: { chainId: ARBITRUM, from: WALLET, transactionRequest: tx } }));
  assert.equal(sent.status, "success", `swap reverted: ${sent.revertReason ?? ""}`);
  assert.match(sent.txHash, HASH);
  assert.equal(sent.chainId, ARBITRUM);
  assert.ok(sent.blockNumber > approval.blockNumber && sent.gasUsed > 0, `block ${sent.blockNumber}, gas ${sent.gasUsed}`);

  // Execute: report the transaction, then follow the swap to DONE.
  const executed = await unwrap(
    partner.POST("/v1/execute", {
      params: { header: { "Idempotency-Key": `smoke-execute-${q.id}` } },
      body: { quoteId: q.id, txHash: sent.txHash },
    }),
  );
  assert.equal(executed.kind, "transaction");
  assert.ok(executed.status !== undefined, "an execute with txHash answers the swap's status");
  assert.equal(executed.status.status, "PENDING");
  assert.equal(executed.status.transactionId, q.id);
  assert.equal(executed.status.sending?.txHash, sent.txHash);
  // The same swap pushed: the status stream from PENDING to DONE, then done.
  const events: StatusStreamEvent[] = [];
  for await (const ev of streamStatus({ baseUrl, apiKey, signal: AbortSignal.timeout(60_000) }, { txHash: sent.txHash })) {
    events.push(ev);
  }
  const end = events.at(-1);
  assert.ok(end?.event === "done", `the stream ended with ${JSON.stringify(end)}`);
  assert.equal(end.data.reason, "terminal");
  const pushed = events.filter((ev) => ev.event === "status").map((ev) => ev.data as Schemas["SwapStatus"]);
  assert.equal(pushed.at(-1)?.status, "DONE", `statuses ${JSON.stringify(pushed)}`);
  step("status stream", pushed.map((st) => `${st.status}/${st.substatus ?? ""}`).join(" → "));
  const done = await until("the swap is DONE", 60_000, async () => {
    const s = await unwrap(partner.GET("/v1/status", { params: { query: { txHash: sent.txHash } } }));
    assert.notEqual(s.status, "FAILED", `the swap failed: ${s.substatus ?? ""} ${s.substatusMessage ?? ""}`);
    return s.status === "DONE" ? s : undefined;
  });
  assert.equal(done.substatus, "COMPLETED");
  assert.equal(done.quoteId, q.id);
  assert.equal(done.receiving?.chainId, BASE);
  assert.match(done.receiving?.txHash ?? "", HASH);
  assert.equal(done.receiving?.amount, q.estimate.toAmount, "the sandbox delivers exactly the quoted toAmount");
  step("execute", `${sent.txHash} DONE, ${done.receiving?.amount ?? "?"} delivered on Base`);

  // The swap's webhooks reached the receiver, which checked their signatures.
  const deliveries = await until("swap.pending and swap.completed are delivered", 30_000, async () => {
    const d = await unwrap(partner.GET("/v1/partner/webhooks/{id}/deliveries", { params: { path: { id: hook.id } } }));
    const dead = d.deliveries.find((x) => x.state === "dead" || (x.statusCode !== null && x.statusCode >= 400));
    assert.equal(dead, undefined, `a delivery was refused: ${JSON.stringify(dead)}`);
    const delivered = new Set(d.deliveries.filter((x) => x.state === "delivered").map((x) => x.event));
    return delivered.has("swap.pending") && delivered.has("swap.completed") ? d.deliveries : undefined;
  });
  for (const d of deliveries) {
    assert.match(d.id, /^dlv_/);
    assert.equal(d.error, null);
    const last = d.attempts.at(-1);
    assert.ok(last?.statusCode != null && last.statusCode >= 200 && last.statusCode < 300, `attempts ${JSON.stringify(d.attempts)}`);
    assert.equal(d.statusCode, last.statusCode);
  }
  step("webhook deliveries", deliveries.map((d) => `${d.event} ${d.state}`).join(", "));

  // The fee is the partner's pending earning.
  const earnings = await unwrap(partner.GET("/v1/partner/me/earnings"));
  assert.equal(earnings.partnerId, me.id);
  const evm = earnings.pending.find((p) => p.ecosystem === "evm");
  assert.ok(evm !== undefined, "the quote's fee is pending on evm");
  assert.equal(evm.rowCount, 1, "one fee-bearing quote, one earnings row (the refused quote earned nothing)");
  // A sandbox fee is always valued (its prices never go stale); a live one
  // without a fresh price would have no amountUSD.
  assert.ok(fee.amountUSD !== undefined, "the sandbox fee is valued in USD");
  assert.equal(units(evm.totalUsd, 6), units(fee.amountUSD, 6), `earned ${evm.totalUsd}, the quote's fee ${fee.amountUSD}`);
  step("earnings", `${evm.totalUsd} USD pending on evm`);

  // The on-ramp: a price, then a checkout that holds it.
  const purchase = { fiatCurrency: "EUR", fiatAmount: 100, cryptoAsset: "USDC", chainId: BASE, paymentMethod: "credit_card" };
  const price = await unwrap(partner.POST("/v1/onramp/quote", { body: purchase }));
  assert.equal(price.fiatCurrency, "EUR");
  assert.equal(price.fiatAmount, 100);
  assert.equal(price.cryptoAsset, "USDC");
  assert.equal(price.chainId, BASE);
  assert.equal(price.paymentMethod, "credit_card");
  assert.ok(price.exchangeRate > 0, `exchangeRate ${price.exchangeRate}`);
  const crypto = units(price.cryptoAmount, 6);
  assert.ok(crypto > 0n, `cryptoAmount ${price.cryptoAmount}`);
  const exact = price.fiatAmount / price.exchangeRate;
  assert.ok(Math.abs(Number(price.cryptoAmount) - exact) < 1e-6, `cryptoAmount ${price.cryptoAmount}, fiat/rate ${exact}`);
  const f = price.fees;
  assert.ok(cents(f.networkFee) >= 1 && cents(f.processingFee) > 0, `fees ${JSON.stringify(f)}`);
  assert.equal(cents(f.partnerFee), Math.round((cents(price.fiatAmount) * me.feeTier.onrampFeeBps) / 10_000), "the partner's on-ramp fee");
  assert.equal(cents(f.totalFee), cents(f.networkFee) + cents(f.processingFee) + cents(f.partnerFee));
  assert.equal(cents(price.totalFiatAmount), cents(price.fiatAmount) + cents(f.totalFee), "fees are on top");
  step("on-ramp quote", `${price.fiatAmount} EUR → ${price.cryptoAmount} USDC, ${f.totalFee} EUR fees`);

  const externalId = `smoke-${Date.now()}`;
  const checkoutBody = {
    ...purchase,
    walletAddress: WALLET,
    externalId,
    redirectUrl: `${baseUrl.replace(/\/+$/, "")}/v1/onramp/status?orderUid=UID`,
  };
  const idempotency = { header: { "Idempotency-Key": `smoke-checkout-${externalId}` } };
  const first = await partner.POST("/v1/onramp/checkout", { params: idempotency, body: checkoutBody });
  const order = await unwrap(first);
  assert.match(order.orderUid, /^ord_[a-z0-9]{26}$/);
  assert.equal(order.status, "CREATED");
  assert.equal(order.externalId, externalId);
  assert.equal(order.walletAddress, WALLET);
  assert.equal(order.chainId, BASE);
  assert.equal(order.estimatedCryptoAmount, price.cryptoAmount, "the checkout holds the quoted price");
  assert.deepEqual(order.quote.fees, price.fees);
  assert.ok(Math.abs(order.expiresAt - (Date.now() / 1000 + 15 * 60)) < 60, `expiresAt ${order.expiresAt}: 15 minutes`);
  const page = new URL(order.checkoutUrl);
  assert.ok(page.protocol === "http:" || page.protocol === "https:", `checkoutUrl ${order.checkoutUrl}`);
  assert.equal(page.pathname, `/checkout/${order.orderUid}`);

  // The same checkout again under the same Idempotency-Key is the same order.
  const again = await partner.POST("/v1/onramp/checkout", { params: idempotency, body: checkoutBody });
  assert.equal(again.response.headers.get("Idempotent-Replayed"), "true");
  assert.equal((await unwrap(again)).orderUid, order.orderUid);
  assert.equal(first.response.headers.get("Idempotent-Replayed"), null);

  const status = await unwrap(anonymous.GET("/v1/onramp/status", { params: { query: { orderUid: order.orderUid } } }));
  assert.equal(status.orderUid, order.orderUid);
  assert.equal(status.status, "CREATED");
  assert.equal(status.externalId, externalId);

  // The one request outside the API: the hosted page the user is sent to.
  const html = await fetch(order.checkoutUrl, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  assert.equal(html.status, 200, `GET ${order.checkoutUrl}`);
  assert.match(html.headers.get("Content-Type") ?? "", /^text\/html/);
  step("on-ramp checkout", `${order.orderUid} at ${order.checkoutUrl}`);
}

function step(name: string, detail: string): void {
  console.log(`ok   ${name}: ${detail}`);
}

const watchdog = setTimeout(() => {
  console.error(`FAIL the smoke test did not finish within ${RUN_TIMEOUT_MS} ms`);
  process.exit(1);
}, RUN_TIMEOUT_MS);
watchdog.unref();

main().then(
  () => {
    console.log("PASS");
  },
  (e: unknown) => {
    console.error("FAIL", e instanceof Error ? (e.stack ?? e.message) : e);
    process.exitCode = 1;
  },
);
