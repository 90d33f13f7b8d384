package solvers

import "testing"

// TestParamRules (#37 item 5): each hyperparameter declares its rule
// beside its name, default and doc. A declared default obeys it, and a
// name has one rule in every method that declares it (a sweep grid key
// means the same for every method it reaches).
func TestParamRules(t *testing.T) {
	rules := map[string]*Rule{}
	where := map[string]string{}
	for _, m := range Methods() {
		for _, p := range m.Params {
			if !p.Derived {
				if err := p.check(p.Default); err != nil {
					t.Errorf("%s: the declared default: %v", m.Name, err)
				}
			}
			if r, ok := rules[p.Name]; ok && r.What != p.rule().What {
				t.Errorf("hyperparameter %s is %q in %s but %q in %s", p.Name, r.What, where[p.Name], p.rule().What, m.Name)
			}
			rules[p.Name], where[p.Name] = p.rule(), m.Name
		}
	}
	for _, c := range []struct {
		method, name string
		v            float64
		ok           bool
	}{
		{"dpls", "clip", 0.5, true}, {"dpls", "clip", -1, false}, {"dpsgd", "steps", 1e12, false}, {"dpsgd", "steps", 2.5, false},
		{"dplp", "momentum", 1, false}, {"dplp", "momentum", 0.5, true}, {"dpsgd", "batch", 0, true}, {"dpls", "psd", 2, false}, {"dpfc", "lr", 0, false},
	} {
		err := CheckParams(c.method, map[string]float64{c.name: c.v})
		if (err == nil) != c.ok {
			t.Errorf("%s %s = %v: %v", c.method, c.name, c.v, err)
		}
	}
}
