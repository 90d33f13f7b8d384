package sweep

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Selected is one line of a sweep's summary: for a dataset, method and ε,
// the setting chosen by median validation accuracy over seeds (never by
// test accuracy) and its test accuracy over the seeds; for a private
// selection, the selections' own results over the seeds.
type Selected struct {
	Dataset    string  `json:"dataset"`
	Imbalanced bool    `json:"imbalanced"`
	Method     string  `json:"method"`
	Private    bool    `json:"private"`
	Epsilon    float64 `json:"epsilon"`
	Setting    string  `json:"setting"`
	Seeds      int     `json:"seeds"`
	// Settings is how many settings were compared on validation.
	Settings     int      `json:"settings"`
	ValMedian    float64  `json:"val_accuracy_median"`
	TestMedian   float64  `json:"test_accuracy_median"`
	TestMin      float64  `json:"test_accuracy_min"`
	TestMax      float64  `json:"test_accuracy_max"`
	Balanced     *float64 `json:"test_balanced_accuracy_median"`
	Minority     *float64 `json:"test_minority_accuracy_median"`
	EpsilonSpent *float64 `json:"epsilon_spent_max"`
	Tuning       string   `json:"tuning"`
	Failed       int      `json:"failed_jobs"`
}

// Summarize selects, per (dataset, method, ε), the setting with the best
// median validation accuracy and reports its test accuracy (median, min
// and max over seeds). Failed jobs are counted, not used.
func Summarize(rows []Row) []Selected {
	type key struct {
		dataset, method string
		eps             float64
	}
	groups := map[key]map[string][]Row{}
	failed := map[key]int{}
	var order []key
	for _, r := range rows {
		k := key{r.Dataset, r.Method, r.Epsilon}
		if groups[k] == nil {
			groups[k] = map[string][]Row{}
			order = append(order, k)
		}
		if r.Error != "" || r.TestAccuracy == nil {
			failed[k]++
			continue
		}
		// Private selections differ in their chosen setting per seed:
		// they group as one.
		s := r.Setting
		if strings.HasPrefix(r.Tuning, "private selection") {
			s = "private selection"
		}
		groups[k][s] = append(groups[k][s], r)
	}
	var out []Selected
	for _, k := range order {
		var best *Selected
		for _, setting := range sortedKeys(groups[k]) {
			rs := groups[k][setting]
			sel := Selected{Dataset: k.dataset, Method: k.method, Epsilon: k.eps, Setting: setting, Seeds: len(rs),
				Settings: len(groups[k]), Imbalanced: rs[0].Imbalanced, Private: rs[0].Private, Tuning: rs[0].Tuning, Failed: failed[k]}
			var val, test, bal, minor, spent []float64
			for _, r := range rs {
				if r.ValAccuracy != nil {
					val = append(val, *r.ValAccuracy)
				}
				test = append(test, *r.TestAccuracy)
				if r.TestBalanced != nil {
					bal = append(bal, *r.TestBalanced)
				}
				if r.TestMinority != nil {
					minor = append(minor, *r.TestMinority)
				}
				if r.EpsilonSpent != nil {
					spent = append(spent, *r.EpsilonSpent)
				}
			}
			sel.ValMedian = median(val)
			sel.TestMedian, sel.TestMin, sel.TestMax = median(test), minOf(test), maxOf(test)
			if len(bal) > 0 {
				sel.Balanced = ptr(median(bal))
			}
			if len(minor) > 0 {
				sel.Minority = ptr(median(minor))
			}
			if len(spent) > 0 {
				sel.EpsilonSpent = ptr(maxOf(spent))
			}
			if setting == "private selection" {
				var chosen []string
				for _, r := range rs {
					chosen = append(chosen, r.Setting)
				}
				sel.Setting = "private selection (chose: " + strings.Join(chosen, "; ") + ")"
			}
			if best == nil || sel.ValMedian > best.ValMedian || math.IsNaN(best.ValMedian) && !math.IsNaN(sel.ValMedian) {
				s := sel
				best = &s
			}
		}
		if best == nil {
			best = &Selected{Dataset: k.dataset, Method: k.method, Epsilon: k.eps, Setting: "all jobs failed", Failed: failed[k],
				ValMedian: math.NaN(), TestMedian: math.NaN(), TestMin: math.NaN(), TestMax: math.NaN()}
		}
		out = append(out, *best)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Dataset != b.Dataset {
			return a.Dataset < b.Dataset
		}
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		return a.Epsilon < b.Epsilon
	})
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

// SummaryTable renders the summary as a Markdown table.
func SummaryTable(sel []Selected) string {
	var b strings.Builder
	b.WriteString("| dataset | method | ε | setting (by validation) | val median | test median [min, max] | balanced | minority | seeds | ε spent |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range sel {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.4f | %.4f [%.4f, %.4f] | %s | %s | %d | %s |\n", s.Dataset, s.Method, epsCell(s.Epsilon), s.Setting,
			s.ValMedian, s.TestMedian, s.TestMin, s.TestMax, optCell(s.Balanced), optCell(s.Minority), s.Seeds, optCell(s.EpsilonSpent))
	}
	return b.String()
}

func epsCell(e float64) string {
	if math.IsInf(e, 1) {
		return "∞"
	}
	return fmt.Sprintf("%g", e)
}

func optCell(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.4f", *p)
}

// SummaryCSV writes the summary as CSV (ε = ∞ as inf, missing values
// empty).
func SummaryCSV(w io.Writer, sel []Selected) error {
	cw := csv.NewWriter(w)
	header := []string{"dataset", "imbalanced", "method", "private", "epsilon", "setting", "seeds", "settings",
		"val_accuracy_median", "test_accuracy_median", "test_accuracy_min", "test_accuracy_max",
		"test_balanced_accuracy_median", "test_minority_accuracy_median", "epsilon_spent_max", "tuning", "failed_jobs"}
	if err := cw.Write(header); err != nil {
		return err
	}
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return formatFloat(*p)
	}
	for _, s := range sel {
		rec := []string{s.Dataset, strconv.FormatBool(s.Imbalanced), s.Method, strconv.FormatBool(s.Private), formatFloat(s.Epsilon),
			s.Setting, strconv.Itoa(s.Seeds), strconv.Itoa(s.Settings), formatFloat(s.ValMedian), formatFloat(s.TestMedian),
			formatFloat(s.TestMin), formatFloat(s.TestMax), opt(s.Balanced), opt(s.Minority), opt(s.EpsilonSpent), s.Tuning, strconv.Itoa(s.Failed)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// MarshalJSON writes the references' ε = ∞ as the string "inf", as every
// --json output of dpfeat does, and a median of nothing as null (JSON has
// neither infinity nor NaN).
func (s Selected) MarshalJSON() ([]byte, error) {
	type plain Selected
	finite := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	var eps any = s.Epsilon
	if math.IsInf(s.Epsilon, 1) {
		eps = "inf"
	}
	return json.Marshal(struct {
		plain
		Epsilon    any      `json:"epsilon"`
		ValMedian  *float64 `json:"val_accuracy_median"`
		TestMedian *float64 `json:"test_accuracy_median"`
		TestMin    *float64 `json:"test_accuracy_min"`
		TestMax    *float64 `json:"test_accuracy_max"`
	}{plain(s), eps, finite(s.ValMedian), finite(s.TestMedian), finite(s.TestMin), finite(s.TestMax)})
}
