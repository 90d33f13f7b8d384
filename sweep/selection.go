package sweep

import (
	"fmt"
)

// Private hyperparameter selection (Papernot & Steinke 2022, Thm. 2): the
// accountant is accounting.PrivateSelection; this file checks the
// configuration.

func (s *Selection) check() error {
	switch s.Mode {
	case "", "validation":
		s.Mode = "validation"
		if s.Distribution != "" || s.Mean != 0 || s.Eta != 0 || s.ValidationPublic {
			return fmt.Errorf("distribution, eta, mean and validation_public belong to mode: private")
		}
		return nil
	case "private":
	default:
		return fmt.Errorf("mode must be validation or private, got %q", s.Mode)
	}
	switch s.Distribution {
	case "logarithmic":
		if s.Eta != 0 {
			return fmt.Errorf("the logarithmic distribution has η = 0")
		}
	case "", "geometric":
		if s.Eta != 0 && s.Eta != 1 {
			return fmt.Errorf("the geometric distribution has η = 1")
		}
		s.Distribution, s.Eta = "geometric", 1
	case "negbin":
		if !(s.Eta > -1) || s.Eta == 0 {
			return fmt.Errorf("negbin needs η > −1, η ≠ 0 (logarithmic is η = 0), got %v", s.Eta)
		}
	default:
		return fmt.Errorf("distribution must be logarithmic, geometric or negbin, got %q", s.Distribution)
	}
	if s.Mean == 0 {
		s.Mean = 10
	}
	if !(s.Mean > 1) || s.Mean > 1e4 {
		return fmt.Errorf("mean (the expected number of runs) must be in (1, 10000], got %v", s.Mean)
	}
	return nil
}
