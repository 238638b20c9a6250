package admin

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// The transaction manager's intents as the operator reads them
// (`swapgate tx list` and `swapgate tx show`): TxLocal on an open store,
// the Client through a running server's listener, behind TxAdmin, as the
// partner operations are. Reading is all the operator does here: an intent
// is moved only by the manager that owns its account.

// Transaction paths, shared by Server and Client.
const (
	pathTxs = "/admin/txs"
	pathTx  = "/admin/txs/{id}"
)

// Bounds of a listing: the default when none is asked, and the most one
// answer holds (a page continues with After).
const (
	DefaultTxLimit = 100
	MaxTxLimit     = 1000
)

// maxIntentID bounds an intent ID an operator types.
const maxIntentID = 128

// TxIntentReader is what TxLocal reads; the store's TxIntents is one.
type TxIntentReader interface {
	TxIntent(ctx context.Context, id string) (*txintent.Intent, error)
	ListTxIntents(ctx context.Context, q txintent.Query) ([]*txintent.Intent, error)
}

// TxAdmin lists and shows intents.
type TxAdmin interface {
	// ListTxs returns the intents f selects in creation order.
	ListTxs(ctx context.Context, f TxFilter) ([]IntentView, error)
	// ShowTx returns one intent; an unknown ID wraps account.ErrNotFound.
	ShowTx(ctx context.Context, id string) (IntentView, error)
}

// TxFilter selects intents; empty fields select every intent.
type TxFilter struct {
	State   string `json:"state,omitempty"`
	Purpose string `json:"purpose,omitempty"`
	ChainID uint64 `json:"chainId,omitempty"`
	// After continues a listing after the intent with this ID.
	After string `json:"after,omitempty"`
	// Limit is at most MaxTxLimit; 0 is DefaultTxLimit.
	Limit int `json:"limit,omitempty"`
}

// query checks f and returns the store's query for it.
func (f TxFilter) query() (txintent.Query, error) {
	q := txintent.Query{State: txintent.State(f.State), Purpose: f.Purpose, ChainID: f.ChainID, After: f.After, Limit: f.Limit}
	if f.State != "" && !q.State.Valid() {
		return q, invalidf("state %q is not one of %v", f.State, txintent.States)
	}
	if len(f.Purpose) > 64 {
		return q, invalidf("purpose is longer than 64 bytes")
	}
	if f.After != "" {
		if err := validateIntentID("after", f.After); err != nil {
			return q, err
		}
	}
	switch {
	case f.Limit < 0 || f.Limit > MaxTxLimit:
		return q, invalidf("limit %d is not between 1 and %d", f.Limit, MaxTxLimit)
	case f.Limit == 0:
		q.Limit = DefaultTxLimit
	}
	return q, nil
}

// validateIntentID refuses what no intent ID is: empty, long, or holding
// anything but printable ASCII without spaces.
func validateIntentID(name, id string) error {
	if id == "" {
		return invalidf("%s is required", name)
	}
	if len(id) > maxIntentID {
		return invalidf("%s is longer than %d bytes", name, maxIntentID)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return invalidf("%s %q is not an intent ID", name, id)
		}
	}
	return nil
}

// IntentView is an intent as the operator reads it: what was asked, where
// it stands, and every transaction signed for it. The signed bytes are
// left out: they are the manager's to send, never an operator's to
// rebroadcast.
type IntentView struct {
	ID       string `json:"id"`
	Purpose  string `json:"purpose"`
	Key      string `json:"key"`
	ChainID  uint64 `json:"chainId"`
	From     string `json:"from"`
	To       string `json:"to"`
	Value    string `json:"value"`
	Data     string `json:"data"`
	GasLimit uint64 `json:"gasLimit"`
	State    string `json:"state"`
	// Reason says why a failed intent failed.
	Reason    string    `json:"reason,omitempty"`
	Nonce     *uint64   `json:"nonce,omitempty"`
	Txs       []TxView  `json:"txs"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// The states of one transaction of an intent, as TxView says them.
const (
	// TxSigned: stored, not yet handed to the node.
	TxSigned = "signed"
	// TxPending: sent, neither mined nor replaced.
	TxPending = "pending"
	// TxReplaced: a later transaction with the same nonce and higher fees
	// took its place.
	TxReplaced = "replaced"
	// TxMined and TxReverted: in a block, its receipt successful or not.
	TxMined    = "mined"
	TxReverted = "reverted"
)

// TxView is one signed transaction of an intent.
type TxView struct {
	Hash                 string     `json:"hash"`
	Nonce                uint64     `json:"nonce"`
	MaxFeePerGas         string     `json:"maxFeePerGas"`
	MaxPriorityFeePerGas string     `json:"maxPriorityFeePerGas"`
	State                string     `json:"state"`
	SentAt               *time.Time `json:"sentAt,omitempty"`
	BlockNumber          uint64     `json:"blockNumber,omitempty"`
	BlockHash            string     `json:"blockHash,omitempty"`
}

// IntentViewOf is in as the operator reads it.
func IntentViewOf(in *txintent.Intent) IntentView {
	v := IntentView{
		ID: in.ID, Purpose: in.Purpose, Key: in.Key, ChainID: in.ChainID, From: in.From, To: in.To,
		Value: in.Value, Data: in.Data.String(), GasLimit: in.GasLimit, State: string(in.State), Reason: in.Reason,
		CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt, Txs: make([]TxView, 0, len(in.Txs)),
	}
	if v.Value == "" {
		v.Value = "0"
	}
	if in.Nonce != nil {
		n := *in.Nonce
		v.Nonce = &n
	}
	mined := in.MinedTx()
	for i, t := range in.Txs {
		tv := TxView{Hash: t.Hash, Nonce: t.Nonce, MaxFeePerGas: t.MaxFeePerGas, MaxPriorityFeePerGas: t.MaxPriorityFeePerGas,
			BlockNumber: t.BlockNumber, BlockHash: t.BlockHash}
		if !t.SentAt.IsZero() {
			at := t.SentAt
			tv.SentAt = &at
		}
		switch {
		case t.BlockNumber != 0 && t.Status == 1:
			tv.State = TxMined
		case t.BlockNumber != 0:
			tv.State = TxReverted
		case mined != nil || i < len(in.Txs)-1:
			tv.State = TxReplaced
		case t.SentAt.IsZero():
			tv.State = TxSigned
		default:
			tv.State = TxPending
		}
		v.Txs = append(v.Txs, tv)
	}
	return v
}

// TxLocal reads intents from an open store.
type TxLocal struct{ store TxIntentReader }

var _ TxAdmin = (*TxLocal)(nil)

// NewTxLocal returns the intent readings over store.
func NewTxLocal(store TxIntentReader) *TxLocal { return &TxLocal{store: store} }

// ListTxs implements TxAdmin.
func (l *TxLocal) ListTxs(ctx context.Context, f TxFilter) ([]IntentView, error) {
	q, err := f.query()
	if err != nil {
		return nil, err
	}
	list, err := l.store.ListTxIntents(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list intents: %w", err)
	}
	out := make([]IntentView, 0, len(list))
	for _, in := range list {
		out = append(out, IntentViewOf(in))
	}
	return out, nil
}

// ShowTx implements TxAdmin.
func (l *TxLocal) ShowTx(ctx context.Context, id string) (IntentView, error) {
	if err := validateIntentID("id", id); err != nil {
		return IntentView{}, err
	}
	in, err := l.store.TxIntent(ctx, id)
	if err != nil {
		return IntentView{}, fmt.Errorf("intent %s: %w", id, err)
	}
	return IntentViewOf(in), nil
}

// RegisterTxs adds the intent readings to s, so that `swapgate tx` reads
// them while a server holds the data directory.
func RegisterTxs(s *Server, store TxIntentReader) error {
	l := NewTxLocal(store)
	if err := s.Handle(fasthttp.MethodGet, pathTxs, func(ctx *fasthttp.RequestCtx) {
		f, err := filterOf(ctx.QueryArgs())
		if err != nil {
			WriteError(ctx, err)
			return
		}
		c, cancel := opContext()
		defer cancel()
		list, err := l.ListTxs(c, f)
		respond(ctx, fasthttp.StatusOK, list, err)
	}); err != nil {
		return err
	}
	return s.Handle(fasthttp.MethodGet, pathTx, func(ctx *fasthttp.RequestCtx) {
		c, cancel := opContext()
		defer cancel()
		v, err := l.ShowTx(c, pathID(ctx))
		respond(ctx, fasthttp.StatusOK, v, err)
	})
}

// filterOf reads a listing's query string.
func filterOf(args *fasthttp.Args) (TxFilter, error) {
	f := TxFilter{State: string(args.Peek("state")), Purpose: string(args.Peek("purpose")), After: string(args.Peek("after"))}
	if s := string(args.Peek("chainId")); s != "" {
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil || id == 0 {
			return f, invalidf("chainId %q is not a chain ID", s)
		}
		f.ChainID = id
	}
	if s := string(args.Peek("limit")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return f, invalidf("limit %q is not an integer", s)
		}
		f.Limit = n
	}
	return f, nil
}

// ListTxs implements TxAdmin through the listener.
func (c *Client) ListTxs(ctx context.Context, f TxFilter) ([]IntentView, error) {
	if _, err := f.query(); err != nil {
		return nil, err
	}
	v := url.Values{}
	for k, s := range map[string]string{"state": f.State, "purpose": f.Purpose, "after": f.After} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if f.ChainID != 0 {
		v.Set("chainId", strconv.FormatUint(f.ChainID, 10))
	}
	if f.Limit != 0 {
		v.Set("limit", strconv.Itoa(f.Limit))
	}
	path := pathTxs
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	out := []IntentView{}
	if err := c.Call(ctx, fasthttp.MethodGet, path, nil, &out); err != nil {
		return nil, fmt.Errorf("admin: list intents: %w", err)
	}
	return out, nil
}

// ShowTx implements TxAdmin through the listener.
func (c *Client) ShowTx(ctx context.Context, id string) (IntentView, error) {
	var v IntentView
	p, err := intentPath(id)
	if err != nil {
		return v, err
	}
	if err := c.Call(ctx, fasthttp.MethodGet, p, nil, &v); err != nil {
		return v, fmt.Errorf("admin: intent %s: %w", id, err)
	}
	return v, nil
}

var _ TxAdmin = (*Client)(nil)

// intentPath is the path of intent id.
func intentPath(id string) (string, error) {
	if err := validateIntentID("id", id); err != nil {
		return "", err
	}
	return "/admin/txs/" + url.PathEscape(id), nil
}
