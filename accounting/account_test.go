package accounting

import (
	"math"
	"testing"
)

// TestRDPCurveMechanism: a mechanism known by its RDP curve composes (by
// RDP only) exactly like the Gaussian whose curve it is, and an order
// between the curve's takes the next one up.
func TestRDPCurveMechanism(t *testing.T) {
	orders := DefaultOrders
	gauss := Mechanism{Name: "g", Kind: KindGaussian, Sensitivity: 1, NoiseStd: 2, Count: 1}
	curve, err := RDPCurve([]Mechanism{gauss}, orders)
	if err != nil {
		t.Fatal(err)
	}
	asCurve := Mechanism{Name: "c", Kind: KindRDP, RDPOrders: orders, RDP: curve, Count: 1}
	a, err := Account([]Mechanism{gauss, gauss}, 1e-5, AccountantRDP, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Account([]Mechanism{gauss, asCurve}, 1e-5, AccountantAuto, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Epsilon != b.Epsilon || b.Accountant != AccountantRDP {
		t.Errorf("curve composed to %v (%s), the Gaussian twice to %v", b.Epsilon, b.Accountant, a.Epsilon)
	}
	coarse := Mechanism{Name: "c", Kind: KindRDP, RDPOrders: []float64{2, 8}, RDP: []float64{0.1, 0.5}, Count: 1}
	got, _ := RDPCurve([]Mechanism{coarse}, []float64{1.5, 2, 3, 8, 9})
	if got[0] != 0.1 || got[1] != 0.1 || got[2] != 0.5 || got[3] != 0.5 || !math.IsInf(got[4], 1) {
		t.Errorf("coarse curve read as %v", got)
	}
	if _, err := Account([]Mechanism{asCurve}, 1e-5, AccountantGDP, Options{}); err == nil {
		t.Error("GDP composed an RDP curve")
	}
	bad := Mechanism{Name: "b", Kind: KindRDP, RDPOrders: []float64{2, 1.5}, RDP: []float64{1, 1}, Count: 1}
	if _, err := Account([]Mechanism{bad}, 1e-5, AccountantAuto, Options{}); err == nil {
		t.Error("descending orders accepted")
	}
}
