package address

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// TestEVMChecksumAgreesWithGoEthereum checks the allocation-free EIP-55
// check against go-ethereum's checksummed rendering on random addresses:
// the checksummed form passes, and flipping the case of any one letter
// fails.
func TestEVMChecksumAgreesWithGoEthereum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 500; n++ {
		var a common.Address
		for i := range a {
			a[i] = byte(rng.UintN(256))
		}
		sum := a.Hex()
		if err := validateEVM(sum); err != nil {
			t.Fatalf("%s: %v", sum, err)
		}
		if err := validateEVM(strings.ToLower(sum)); err != nil {
			t.Fatalf("lower-case %s: %v", sum, err)
		}
		b := []byte(sum)
		for i := 2; i < len(b); i++ {
			if b[i] >= 'a' && b[i] <= 'f' {
				b[i] -= 'a' - 'A'
			} else if b[i] >= 'A' && b[i] <= 'F' {
				b[i] += 'a' - 'A'
			} else {
				continue
			}
			flipped := string(b)
			if err := validateEVM(flipped); err == nil && !isSingleCase(flipped) {
				t.Fatalf("%s (one letter's case flipped from %s) passed", flipped, sum)
			}
			break
		}
	}
}

func isSingleCase(s string) bool {
	body := s[2:]
	return body == strings.ToLower(body) || body == strings.ToUpper(body)
}

func BenchmarkValidateEVMChecksummed(b *testing.B) {
	addr := "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := validateEVM(addr); err != nil {
			b.Fatal(err)
		}
	}
}
