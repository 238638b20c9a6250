package suite

import (
	"context"
	"strings"
	"testing"
)

// The batch itself runs against a real server in cmd/swapgate
// (TestBenchTxAgainstRealServer): the manager needs a store, which only
// the binary opens.

func TestRunTxRefusesAnIncompleteLoad(t *testing.T) {
	for _, l := range []TxLoad{{}, {RPCURL: "http://127.0.0.1:1/rpc/42161", Intents: 1}} {
		if _, err := RunTx(context.Background(), l); err == nil || !strings.Contains(err.Error(), "at least one intent") {
			t.Errorf("%+v: err %v, want the refusal", l, err)
		}
	}
}

func TestQuantileNearestRank(t *testing.T) {
	s := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		q    float64
		want int64
	}{{0.5, 5}, {0.99, 10}, {0.1, 1}, {1, 10}, {0, 1}} {
		if got := quantile(s, c.q); got != c.want {
			t.Errorf("quantile(%v) = %d, want %d", c.q, got, c.want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("empty: want 0")
	}
}
