package txm

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// LocalSigner signs with a private key held in memory: the operator key
// the store keeps sealed (store.TxIntents' OperatorKey), opened at start.
// It never prints or logs the key.
type LocalSigner struct {
	key  *ecdsa.PrivateKey
	addr common.Address
}

// NewLocalSigner reads a 32-byte secp256k1 private key.
func NewLocalSigner(key []byte) (*LocalSigner, error) {
	k, err := crypto.ToECDSA(key)
	if err != nil {
		return nil, fmt.Errorf("txm: operator key: %w", err)
	}
	return &LocalSigner{key: k, addr: crypto.PubkeyToAddress(k.PublicKey)}, nil
}

// NewOperatorKey makes a new random private key's 32 bytes.
func NewOperatorKey() ([]byte, error) {
	k, err := crypto.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("txm: generate operator key: %w", err)
	}
	return crypto.FromECDSA(k), nil
}

// Address is the key's account.
func (s *LocalSigner) Address() common.Address { return s.addr }

// SignTx signs tx for chainID (EIP-155, EIP-1559 where tx is one).
func (s *LocalSigner) SignTx(_ context.Context, chainID *big.Int, tx *types.Transaction) (*types.Transaction, error) {
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(chainID), s.key)
	if err != nil {
		return nil, fmt.Errorf("txm: sign: %w", err)
	}
	return signed, nil
}
