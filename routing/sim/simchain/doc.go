// Package simchain is the sandbox chain: a simulated EVM chain that
// executes transaction requests as a chain does, so that in sandbox mode a
// client can play the wallet and the rest of the service sees the effects
// (balances, allowances, receipts, logs, deposits) exactly as on a real
// chain. It is plain Go: no HTTP, no actors, no storage. A Chain is not safe
// for concurrent use; its owner serialises every call.
//
// # Accounts and genesis
//
// One Chain stands for one EVM chain of the registry. Its assets are the
// native coin (the zero address) and one ERC-20 per registry token of the
// chain, deployed at the token's address with the ERC20 code. Every address
// without code starts with GenesisNativeUnits (100) native coins (or
// Config.GenesisNative, where a chain's coin is too cheap for 100 to pay its
// gas) and GenesisTokenUnits (1,000) whole units of every token, at the
// asset's decimals (1,000 USDC is 1,000,000,000 base units). The allocation is
// credited lazily: a balance nobody has written reads as the genesis amount,
// and the first write (a transfer in or out, gas) stores the real balance
// from then on, so "every address" needs no entry per address and reads
// stay consistent. Contracts, the zero address and the faucet start with
// nothing; Allocate gives an account (a contract's reserves) a balance
// before the first transaction, as a genesis allocation does. Faucet tops
// an address up with any amount of any asset of the chain, in a faucet
// transaction mined like any other: an ERC-20 top-up is a mint that emits
// Transfer from the zero address.
//
// # Transactions, blocks and hashes
//
// Send executes a TxRequest (to, data, value, gas limit) from an account
// and mines it in a block of its own, as a development chain mining on
// arrival does; Faucet does the same for a top-up. A request that cannot be
// a transaction at all (no key for the sender, a contract as sender, a gas
// limit under the intrinsic gas or over BlockGasLimit, a sender who cannot
// pay gas limit × gas price) is refused with an error and leaves no trace.
// Everything else is mined: a failure (too little native coin for the
// value, an ERC-20 balance or allowance too small, an unknown selector, a
// contract that reverts, gas running out) gives a receipt with Status 0 and
// a RevertReason, the nonce consumed and the gas paid, and every other
// change of the transaction rolled back through the state's journal.
// ParseTxRequest reads a request as wallets and quotes write it, every
// field a string. SendRaw takes a signed transaction instead, as a node
// does, with nonces, a queue per sender and the base fee (signed.go); it
// is mined under its own hash.
//
// A transaction's hash is keccak256 of the RLP list [chainId, from, nonce,
// to, value, data, gasLimit, gasPrice], unique per chain, sender and nonce;
// a block's hash is keccak256 of [chainId, number, parentHash, time,
// gasUsed, transaction hashes]. Block timestamps come from the injected
// clock, each at least a second after its parent's. The same sequence of
// calls on the same clock therefore gives the same hashes, blocks and
// balances.
//
// # Gas
//
// Gas follows a small fixed schedule (TxGas and the constants after it):
// 21,000 per transaction plus its data bytes, ContractCallGas per contract
// entered, StorageReadGas and StorageWriteGas per balance, allowance or
// storage slot read and written, the EVM's log costs, and whatever a
// contract charges itself. The sender pays gas used × the chain's fixed gas
// price in native coin (a signed transaction: its effective gas price
// under the base fee; the fee is burned); a receipt's GasUsed never
// exceeds the gas limit, and a transaction that runs out uses all of it and
// fails with "out of gas".
//
// # Contracts
//
// Code is a Contract registered at an address (Deploy). It runs with an Env
// that moves assets under the chain's rules, with the contract as
// msg.sender: transfers from its own balance, transferFrom against an
// allowance given to it, approvals, mint and burn for the tokens it is a
// minter of (GrantMinter), calls to other contracts, storage slots of its
// own, and logs. A contract that returns an error reverts, and everything
// it and its callees changed is rolled back. ERC20 is itself such a contract, the code of every token,
// so application contracts (a router, a bridge sender, a warp route) are
// written against the same interface and see the same rules a Solidity
// contract would.
//
// # Reads
//
// Balance, Allowance, Nonce, Head, BlockByNumber, Transaction, Receipt and
// Logs read the state and the mined history; Call runs a read-only call
// (balanceOf, allowance, decimals, symbol, ...) against the head block as
// eth_call does, changing nothing.
package simchain
