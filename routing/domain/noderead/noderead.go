// Package noderead bounds the reads the service makes from chains'
// JSON-RPC nodes (balances, gas, pulseroute's chain state, a deposit's
// evidence) and names how a failed read reaches a client.
//
// A node may accept a connection and never answer; go-ethereum's client
// then waits for as long as its context lets it, and a request that read
// through it would hang until the client gave up. Every read is therefore
// made under a deadline of its own, the operator's --rpc-timeout, set
// apart from the caller's: a read that the node did not answer in time is
// ErrTimeout, answered UPSTREAM_TIMEOUT (504), as an HTTP upstream that
// does not answer in time is; a node that answered with an error, or that
// could not be reached, is RPC_FAILURE (502). A caller's own deadline (a
// quote's race) ending first is the caller's, not the node's: it is not
// ErrTimeout.
package noderead

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// DefaultTimeout is --rpc-timeout's default: a healthy node answers an
// eth_call or a batch of a chain's balances in well under a second, and a
// read that takes five has failed for the client waiting on it.
const DefaultTimeout = 5 * time.Second

// ErrTimeout is a read the node did not answer within its deadline.
var ErrTimeout = errors.New("the node did not answer within --rpc-timeout")

// Bound returns ctx with a read's deadline, timeout from now, whose cause
// is ErrTimeout. A timeout of zero or less adds none: only readers built
// around a test's fake leave it unset; the service's are dialled with the
// operator's --rpc-timeout, which its settings keep positive.
func Bound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, timeout, ErrTimeout)
}

// Err is the error of a read made under bounded (from Bound): err wrapped
// with ErrTimeout when the read's own deadline ended it, err itself
// otherwise (nil stays nil).
func Err(bounded context.Context, err error) error {
	if err == nil || errors.Is(err, ErrTimeout) || !errors.Is(context.Cause(bounded), ErrTimeout) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrTimeout, err)
}

// Read runs read under a deadline of timeout and returns its error
// through Err.
func Read(ctx context.Context, timeout time.Duration, read func(ctx context.Context) error) error {
	bounded, cancel := Bound(ctx, timeout)
	defer cancel()
	return Err(bounded, read(bounded))
}

// Failure is the client's error of a failed read: UPSTREAM_TIMEOUT when
// err is a node's ErrTimeout, RPC_FAILURE otherwise, with message and the
// cause kept for the logs.
func Failure(message string, err error) *apierr.Error {
	code := apierr.RPCFailure
	if errors.Is(err, ErrTimeout) {
		code = apierr.UpstreamTimeout
	}
	return apierr.New(code, message).Wrap(err)
}
