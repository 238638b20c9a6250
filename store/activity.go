package store

import (
	"encoding/json"
	"fmt"

	"github.com/swapgate/swapgate/routing/codec/jsonenc"
	"github.com/swapgate/swapgate/routing/domain/account"
)

// activityRecord is the on-disk form of an activity: the record and its
// encoding version. EncodeActivity writes the same bytes without reflection.
// Version 2 adds the earning's priceUsd (the fee token's USD price the fee
// was valued at) and the feeUsdUnknown and volumeUsdUnknown marks of
// figures that could not be valued; a version 1 record has none of them,
// and its figures were all valued. A line that became a swap may carry its
// fromAddress, toAddress, sendingTxHash and receivingTxHash (left out when
// empty, as on every record written before they were kept).
type activityRecord struct {
	V int `json:"v"`
	account.Activity
}

// activityVersion is the version of the activity records this build writes.
const activityVersion = 2

// DecodeActivity decodes an activity record EncodeActivity wrote (in any
// encoding version it still reads): every backend keeps the same bytes.
func DecodeActivity(b []byte) (*account.Activity, error) {
	var rec activityRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("store: decode activity: %w", err)
	}
	switch rec.V {
	case 1:
		// Written before prices could be absent: every figure was valued,
		// at a price the record did not keep.
		rec.FeeUSDUnknown, rec.VolumeUSDUnknown = false, false
		if rec.Earning != nil {
			rec.Earning.PriceUSD = ""
		}
	case activityVersion:
	default:
		return nil, fmt.Errorf("store: activity record version %d unknown", rec.V)
	}
	return &rec.Activity, nil
}

// EncodeActivity checks and encodes an activity record, the bytes every
// backend keeps for it.
func EncodeActivity(a *account.Activity) ([]byte, error) {
	if err := a.CheckIdentity(); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	// Every partner quote writes one: appended field by field, the bytes
	// json.Marshal writes for an activityRecord (the tests hold it to that).
	o := jsonenc.Begin(make([]byte, 0, 384))
	o.Int("v", activityVersion)
	o.String("partnerId", a.PartnerID)
	o.String("id", a.ID)
	o.String("kind", a.Kind)
	o.String("status", a.Status)
	o.String("provider", a.Provider)
	o.String("tool", a.Tool)
	o.Uint("fromChain", a.FromChain)
	o.Uint("toChain", a.ToChain)
	o.String("fromToken", a.FromToken)
	o.String("toToken", a.ToToken)
	o.String("fromAmount", a.FromAmount)
	o.String("toAmount", a.ToAmount)
	o.Int("feeMicroUsd", a.FeeMicroUSD)
	o.Int("volumeMicroUsd", a.VolumeMicroUSD)
	o.Time("createdAt", a.CreatedAt)
	o.TrueOmitFalse("feeUsdUnknown", a.FeeUSDUnknown)
	o.TrueOmitFalse("volumeUsdUnknown", a.VolumeUSDUnknown)
	if e := a.Earning; e != nil {
		o.BeginObject("earning")
		o.String("ecosystem", e.Ecosystem)
		o.String("feeToken", e.FeeToken)
		o.String("feeAmount", e.FeeAmount)
		o.StringOmitEmpty("priceUsd", e.PriceUSD)
		o.String("state", e.State)
		o.StringOmitEmpty("settledBatch", e.SettledBatch)
		o.StringOmitEmpty("settledTo", e.SettledTo)
		o.TimeOmitZero("settledAt", e.SettledAt)
		if e.SettledChainID != 0 {
			o.Uint("settledChainId", e.SettledChainID)
		}
		o.StringOmitEmpty("settledTx", e.SettledTx)
		o.EndObject()
	}
	o.StringOmitEmpty("fromAddress", a.FromAddress)
	o.StringOmitEmpty("toAddress", a.ToAddress)
	o.StringOmitEmpty("sendingTxHash", a.SendingTxHash)
	o.StringOmitEmpty("receivingTxHash", a.ReceivingTxHash)
	val, err := o.End()
	if err != nil {
		return nil, fmt.Errorf("store: encode activity %s: %w", a.ID, err)
	}
	return val, nil
}

// EncodedQuote is a new partner quote's record, encoded ahead of its
// commit by EncodeQuote, so that the quote path's many goroutines do the
// encoding rather than the one that commits.
type EncodedQuote struct {
	rec *account.Activity
	val []byte
}

// Activity is the record that was encoded. Callers must not change it.
func (q EncodedQuote) Activity() *account.Activity { return q.rec }

// Record is the record's encoding: a JSON object, the activity's fields
// and its encoding version in "v", which DecodeActivity reads. Another
// backend stores it as it is, so that the encoding is done off its
// commit path too. Callers must not change it.
func (q EncodedQuote) Record() []byte { return q.val }

// EncodeQuote checks and encodes a new partner quote's record: its
// activity, holding its earning when the quote carried a fee.
func EncodeQuote(a *account.Activity) (EncodedQuote, error) {
	if err := a.CheckNew(); err != nil {
		return EncodedQuote{}, fmt.Errorf("store: quote record: %w", err)
	}
	val, err := EncodeActivity(a)
	if err != nil {
		return EncodedQuote{}, err
	}
	return EncodedQuote{rec: a, val: val}, nil
}

// Durability says whether a commit waits for its WAL sync. Unsynced
// commits survive a crash of the process (the operating system holds what
// was written) but not of the machine.
type Durability bool

const (
	// Synced commits are on stable storage when they return.
	Synced Durability = true
	// Unsynced commits are written without waiting for the sync.
	Unsynced Durability = false
)
