// Package moonpay is the live on-ramp provider: MoonPay's widget API behind
// onramp.Provider and onramp.Reporter. It prices a purchase with MoonPay's
// buy quote, opens an order as a signed widget URL the user completes the
// payment at, and follows the order through MoonPay's transaction lookup
// and its signed webhooks.
//
// The protocol facts it relies on, from MoonPay's public documentation:
//
//   - Buy quote: GET {api}/v3/currencies/{currencyCode}/buy_quote with the
//     query parameters apiKey (the publishable key), baseCurrencyCode (the
//     fiat, lower case), baseCurrencyAmount, paymentMethod,
//     areFeesIncluded and extraFeePercentage (the integrator's own fee, a
//     percentage of the base amount that MoonPay charges on top and pays
//     out to the account). It answers a JSON object whose numbers are
//     baseCurrencyAmount (the fiat converted), quoteCurrencyAmount (the
//     crypto bought, in whole units), quoteCurrencyPrice (the fiat price of
//     one whole unit), feeAmount (MoonPay's fee), extraFeeAmount (the
//     integrator's fee), networkFeeAmount (the delivery's network fee) and
//     totalAmount (what the user pays). With areFeesIncluded=false the fees
//     are on top: totalAmount = baseCurrencyAmount + feeAmount +
//     extraFeeAmount + networkFeeAmount.
//   - Payment methods: credit_debit_card for cards, and the bank transfer
//     of the currency: ach_bank_transfer (USD), sepa_bank_transfer (EUR),
//     gbp_bank_transfer (GBP).
//   - Currency codes: lower-case codes naming the asset and, off its home
//     chain, the network (eth, usdc, usdc_polygon, usdc_arbitrum,
//     usdc_base, eth_base, sol, btc …); see currency.go for the table.
//   - Widget URL: {widget}?apiKey=…&currencyCode=…&walletAddress=…&
//     baseCurrencyCode=…&baseCurrencyAmount=…&externalTransactionId=…&
//     redirectURL=… (paymentMethod and email preselect what they name). A
//     URL that carries walletAddress must be signed: signature is the
//     base64 of HMAC-SHA256, keyed with the secret key, of the URL's search
//     string as sent (the leading '?' and the URL-encoded values included),
//     appended last as &signature=<URL-encoded>.
//   - Transaction lookup: GET {api}/v1/transactions/ext/{externalTransactionId}
//     with the header "Authorization: Api-Key <secret key>" answers an array
//     of the transactions made under that id (a user who retries a declined
//     card makes another), 404 when there is none. A transaction has id,
//     status, externalTransactionId, cryptoTransactionId (the delivery's
//     hash, once sent), failureReason and updatedAt (ISO 8601).
//   - Buy statuses: waitingPayment and waitingAuthorization (the user has
//     not paid yet, or a 3-D Secure or bank step is pending), pending (the
//     payment is taken and the crypto being sent), failed, completed.
//   - Webhooks: a POST whose body is {type, data, externalCustomerId}, type
//     transaction_created, transaction_updated or transaction_failed and
//     data the transaction, signed in the header
//     "Moonpay-Signature-V2: t=<unix seconds>,s=<hex HMAC-SHA256(webhook key,
//     t + "." + raw body)>". A receiver answers 400 to a bad signature, and
//     MoonPay retries what is not acknowledged with a 2xx.
//
// How the adapter maps them (decisions where the documentation leaves a
// choice):
//
//   - Order states: waitingPayment and waitingAuthorization leave an order
//     CREATED; pending is PAYMENT_RECEIVED, or CRYPTO_SENT once the
//     transaction carries its cryptoTransactionId (the TxHash); completed
//     is COMPLETED (the order passes through every state in between, see
//     onramp.Order.Follow); failed is FAILED with MoonPay's failureReason.
//     MoonPay's buy statuses have no refund of their own, so REFUNDED is
//     never reported by this provider. Of several transactions under one
//     order, the most advanced speaks for it (a completed one over a
//     failed first attempt).
//   - The partner fee: the partner's on-ramp rate is sent as
//     extraFeePercentage (basis points ÷ 100 with two places, 1.20 for 120 bps), so that
//     MoonPay charges it on top with its own fees and pays it out to the
//     operator's account; the quote's partnerFee is MoonPay's
//     extraFeeAmount, what the user is actually charged, and the partner's
//     share enters the ledger from the order as for the sandbox. The widget
//     URL does not carry the rate: the operator's MoonPay account must have
//     the same default extra fee for the widget's price to be the quote's.
//     processingFee is feeAmount and networkFee networkFeeAmount.
//   - Amounts: MoonPay's fiat figures are read exactly and rounded half up
//     to the cent; an answer whose baseCurrencyAmount is not the amount
//     asked for, or whose totalAmount differs from the amount plus the fees
//     by more than two cents (the rounding of the three fees), is an
//     UPSTREAM_ERROR; the quote's total is always the amount plus the fees.
//     The crypto amount is truncated to the asset's display places and the
//     rate rounded to 8 significant digits, the rules of every quote.
//   - An asset MoonPay has no code for is refused (INVALID_PARAMS naming
//     cryptoAsset); Catalogue leaves such assets out of the live catalogue
//     in the first place.
//   - Webhook timestamps: a signature older or newer than
//     WebhookTolerance (5 minutes) is refused as stale, so that a captured
//     webhook cannot be replayed later; the comparison of the signature is
//     constant-time. A missed or refused webhook is covered by the desk's
//     periodic lookup.
package moonpay
