package accounting_test

import (
	"fmt"

	"github.com/dpfeat/dpfeat/accounting"
)

// DP-LS releases three Gaussian statistics; calibrate one noise multiplier
// for (1, 1e-5)-DP with the exact GDP accountant.
func ExampleCalibrate() {
	z, g, err := accounting.Calibrate(1, 1e-5, accounting.AccountantGDP, accounting.Options{},
		accounting.GaussianReleases("DP-LS statistic", 3))
	if err != nil {
		panic(err)
	}
	fmt.Printf("noise multiplier %.4f\n", z)
	fmt.Println(g)
	// Output:
	// noise multiplier 6.4616
	// (ε = 1, δ = 1e-05)-DP [gdp, add-remove adjacency, μ = 0.268052]
}

// The DP-SGD setting of Abadi et al. on MNIST: 60 epochs at q = 256/60000
// with σ = 1.1.
func ExampleAccount_dpsgd() {
	q := 256.0 / 60000
	steps := int(60 / q)
	g, err := accounting.Account([]accounting.Mechanism{{
		Name: "DP-SGD step", Kind: accounting.KindGaussian,
		Sensitivity: 1, NoiseStd: 1.1, SamplingRate: q, Count: steps,
	}}, 1e-5, accounting.AccountantAuto, accounting.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(accounting.FormatUp(float64(g.Epsilon)), g.Accountant)
	// Output:
	// 2.59656 rdp
}

func ExampleZCDPEpsilon() {
	eps, _ := accounting.ZCDPEpsilon(0.5, 1e-7, accounting.ConversionCKS)
	simple, _ := accounting.ZCDPEpsilon(0.5, 1e-7, accounting.ConversionSimple)
	fmt.Printf("CKS %.4f, simple %.4f\n", eps, simple)
	// Output:
	// CKS 5.6709, simple 6.1777
}
