// Package memsize is the one rule for memory budgets: their default and
// how a byte count is printed, shared by the solvers (--memory) and the
// readers that size what a file claims against it.
package memsize

import (
	"fmt"
	"math"
)

// Default is the memory budget when none is given (--memory's default).
const Default int64 = 4 << 30

// Or returns budget, or Default when budget ≤ 0.
func Or(budget int64) int64 {
	if budget > 0 {
		return budget
	}
	return Default
}

// String prints a byte count in KiB, MiB or GiB.
func String(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", math.Ceil(b/(1<<10)))
}
