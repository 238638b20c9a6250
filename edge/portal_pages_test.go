package edge

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// The portal's wallet filter reads as the API's (any case of an EVM
// address, the API's message for a refused one) and stays in the export
// link and the next page's link with the other filters.
func TestPortalWalletFilterKeptInLinks(t *testing.T) {
	formats := []string{"evm", "solana"}
	var args fasthttp.Args
	args.Parse("status=DONE&wallet=+0x8BA1F109551BD432803012645AC136DDD64DBA72+&cursor=abc")
	q, keep, msg := portalQuery(&args, formats)
	if msg != "" || q.Wallet != "0x8ba1f109551bd432803012645ac136ddd64dba72" || q.Status != "DONE" || q.Cursor != "abc" {
		t.Fatalf("portalQuery = %+v, %v, %q", q, keep, msg)
	}
	csv, next := portalTxLinks(keep, "CUR")
	for _, link := range []string{csv, next} {
		if !strings.Contains(link, "wallet=0x8BA1F109551BD432803012645AC136DDD64DBA72") || !strings.Contains(link, "status=DONE") {
			t.Errorf("a link lost a filter: %s", link)
		}
	}
	if !strings.HasPrefix(csv, PortalPath+"/transactions.csv?") || strings.Contains(csv, "cursor") ||
		!strings.HasPrefix(next, PortalPath+"/transactions?") || !strings.Contains(next, "cursor=CUR") {
		t.Errorf("links %s and %s", csv, next)
	}
	if _, last := portalTxLinks(keep, ""); last != "" {
		t.Errorf("the last page links to %s", last)
	}
	args.Parse("wallet=0x8Ba1f109551bD432803012645Ac136ddd64DBA72")
	if _, _, msg := portalQuery(&args, formats); !strings.Contains(msg, "wallet must be an account address") || !strings.Contains(msg, "EIP-55") {
		t.Errorf("a broken checksum: %q", msg)
	}
}
