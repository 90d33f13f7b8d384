package ledger_test

import (
	"fmt"
	"os"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/ledger"
)

// ExampleLedger_Spend sets a budget of (ε = 2, δ = 1e-5) for a dataset and
// records two releases; the ledger composes them (exact GDP) and refuses
// a third that would pass the budget.
func ExampleLedger_Spend() {
	dir, _ := os.MkdirTemp("", "dpfeat-example-*")
	defer os.RemoveAll(dir) // made by MkdirTemp above
	key, _ := ledger.NameKey("hospital-scans")
	l := ledger.At(dir, key)
	if err := l.Init(2, 1e-5, "scans.arrow"); err != nil {
		fmt.Println(err)
		return
	}
	release := func(z float64) ledger.Release {
		m := accounting.Mechanism{Name: "noisy sums", Kind: accounting.KindGaussian, Sensitivity: 1, NoiseStd: z, Count: 1}
		g, _ := accounting.Account([]accounting.Mechanism{m}, 1e-5, accounting.AccountantGDP, accounting.Options{})
		return ledger.Release{Method: "dpls", Guarantee: g, Output: "clf.safetensors"}
	}
	for _, z := range []float64{4, 4, 1} {
		g, err := l.Spend(release(z))
		fmt.Printf("%s, refused: %v\n", accounting.FormatUp(float64(g.Epsilon)), err != nil)
	}
	// Output:
	// 0.926342, refused: false
	// 1.35647, refused: false
	// 4.6867, refused: true
}
