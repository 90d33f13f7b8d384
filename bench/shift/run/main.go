// Command run is the shifted-feature benchmark of bench/shift.sh (issue
// 18): for each feature set (bench/out/shift-VARIANT-ENCODER-*.arrow, and
// the in-distribution Fashion-MNIST files), training size n (a per-row
// subsample of the private rows) and ε, the median test accuracy over
// seeds of each configuration, next to non-private ls and logreg on the
// same rows. A configuration is METHOD[/PARAM=V…][+TRANSFORM[:DIMS][~SHARE][*CLUSTERS][^RIDGE][%]][@public|@basis|@subspace|@prior]:
// the method with defaults (or the given hyperparameters), a feature
// transform (% at its end: the fit distilled into a head on the public
// rows, TransformSpec.Distill) learned privately or from the variant's public file (@public),
// with the directions of the encoder's public features (@basis, -basis),
// privately within their subspace (@subspace), or privately in all D with
// their second-moment matrix mixed in (@prior). It prints Markdown tables.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/bench/internal/benchutil"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

func main() {
	sets := flag.String("sets", "invert-fmnist-resnet", "feature sets: VARIANT-ENCODER (bench/out/shift-…) or fmnist-ENCODER (in distribution)")
	ns := flag.String("n", "6000", "training sizes (0: all rows)")
	epss := flag.String("eps", "1,8", "ε values (δ = 1e-5)")
	configs := flag.String("configs", "dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,auto@public", "configurations")
	seeds := flag.Int("seeds", 3, "seeds per cell")
	refs := flag.String("refs", "ls,logreg", "non-private references")
	flag.StringVar(&autoName, "auto", "auto", "the configuration the summary reads as auto (auto@public: auto with the set's public features)")
	flag.StringVar(&before, "before", "", "a configuration that is auto's earlier rule on these cells: the summary shows the gap it recovered beside auto's")
	rule := flag.Bool("rule", false, "print auto's rule table (the configurations' accuracy by n·μ) instead of the auto summary")
	flag.StringVar(&basisPattern, "basis", "bench/out/fmnist-%s-public.arrow", "a configuration's @basis file, %s the encoder (the set name's last part): public features whose directions its transform takes")
	goal := flag.String("goal", "1=0.5,8=0.8", "the share of the gap auto should recover, by ε: with an auto! configuration (auto, its noise removed) the summary shows what the noise costs and what the goal allows")
	flag.Parse()
	for _, g := range split(*goal) {
		e, v, ok := strings.Cut(g, "=")
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			fmt.Fprintf(os.Stderr, "bench/shift/run: -goal %q: expected EPS=SHARE,...\n", g)
			os.Exit(1)
		}
		goals[e] = f
	}
	if err := run(split(*sets), split(*ns), split(*epss), split(*configs), split(*refs), *seeds, *rule); err != nil {
		fmt.Fprintln(os.Stderr, "bench/shift/run:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// paths returns the training, test and public files of a set.
func paths(set string) (tr, te, pub string) {
	p := "bench/out/shift-" + set
	if strings.HasPrefix(set, "fmnist-") {
		p = "bench/out/" + set
	}
	pub = p + "-public.arrow"
	if _, err := os.Stat(pub); err != nil {
		pub = ""
	}
	return p + "-private.arrow", p + "-test.arrow", pub
}

// basisPattern is where a set's @basis features are (-basis).
var basisPattern string

// basisFor is the basis file of a set: its encoder's public features.
func basisFor(set string) string {
	return fmt.Sprintf(basisPattern, set[strings.LastIndex(set, "-")+1:])
}

type config struct {
	basis bool
	// noiseless fits the configuration at the same ε with noise removed
	// (its calibration, ridges and clipping unchanged): from every release
	// when the name ends in "!", from the releases whose names start with
	// quiet when it ends in "!QUIET" ("!sums", "!transform").
	noiseless    bool
	quiet        string
	name, method string
	params       map[string]float64
	spec         solvers.TransformSpec
	public       bool
}

func parseConfig(s string) (config, error) {
	c := config{name: s}
	if i := strings.Index(s, "!"); i >= 0 {
		c.noiseless, c.quiet, s = true, s[i+1:], s[:i]
	}
	if i := strings.Index(s, "@"); i >= 0 {
		switch s[i+1:] {
		case "public":
			c.public = true
		case "basis":
			c.basis = true
		case "subspace":
			c.basis, c.spec.Subspace = true, true
		case "prior":
			c.basis, c.spec.Prior = true, true
		default:
			return c, fmt.Errorf("config %q: @%s (expected @public, @basis, @subspace or @prior)", s, s[i+1:])
		}
		s = s[:i]
	}
	c.method = s
	if i := strings.Index(s, "+"); i >= 0 {
		c.method, s = s[:i], s[i+1:]
		if strings.HasSuffix(s, "%") {
			c.spec.Distill, s = true, strings.TrimSuffix(s, "%")
		}
		if j := strings.Index(s, "^"); j >= 0 {
			c.spec.Ridge, s = s[j+1:], s[:j]
		}
		if j := strings.Index(s, "*"); j >= 0 {
			k, err := strconv.Atoi(s[j+1:])
			if err != nil {
				return c, fmt.Errorf("config %q: %v", c.name, err)
			}
			c.spec.Clusters, s = k, s[:j]
		}
		if j := strings.Index(s, "~"); j >= 0 {
			v, err := strconv.ParseFloat(s[j+1:], 64)
			if err != nil {
				return c, fmt.Errorf("config %q: %v", c.name, err)
			}
			c.spec.Share, s = v, s[:j]
		}
		c.spec.Kind = s
		if j := strings.Index(s, ":"); j >= 0 {
			d, err := strconv.Atoi(s[j+1:])
			if err != nil {
				return c, fmt.Errorf("config %q: %v", c.name, err)
			}
			c.spec.Kind, c.spec.Dims = s[:j], d
		}
	}
	parts := strings.Split(c.method, "/")
	c.method = parts[0]
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return c, fmt.Errorf("config %q: %q, expected PARAM=NUMBER", c.name, kv)
		}
		if c.params == nil {
			c.params = map[string]float64{}
		}
		c.params[k] = f
	}
	return c, nil
}

// cell is one (set, n) table's results: median accuracy per
// configuration and ε, and the references'.
type cell struct {
	set    string
	n      int64
	median map[string]map[string]float64
	ref    map[string]float64
}

func run(sets, ns, epss, configs, refs []string, seeds int, rule bool) error {
	var cfgs []config
	for _, s := range configs {
		c, err := parseConfig(s)
		if err != nil {
			return err
		}
		cfgs = append(cfgs, c)
	}
	ctx := context.Background()
	var cells []cell
	for _, set := range sets {
		trPath, tePath, pubPath := paths(set)
		te, err := features.ReadAll(tePath, features.ReadOptions{})
		if err != nil {
			return err
		}
		f, err := features.Open(trPath, features.ReadOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		total := f.Rows()
		cache := &train.Cache{}
		for _, nStr := range ns {
			n, err := strconv.Atoi(nStr)
			if err != nil {
				return err
			}
			if n > 0 && int64(n) >= total {
				continue // the whole file: n = 0's table
			}
			var rule *features.RowRule
			cl := cell{set: set, n: total, median: map[string]map[string]float64{}, ref: map[string]float64{}}
			if n > 0 {
				if rule, err = features.NewRowSplit(1-float64(n)/float64(total), 7); err != nil {
					return err
				}
				_, kept, err := rule.SelectFile(f)
				if err != nil {
					return err
				}
				cl.n = int64(len(kept))
			}
			fit := func(method string, pub, basis bool, o solvers.Options) (*train.Outcome, error) {
				// A configuration without @basis fits without one, even where
				// the file records its encoder's (extract's synthetic basis):
				// auto and auto@basis stay the rule without and with it.
				req := train.Request{Method: method, Train: trPath, Options: o, Cache: cache, Exclude: rule, NoEncoderBasis: !basis}
				if pub {
					req.Public = pubPath
				}
				if basis {
					req.Basis = basisFor(set)
				}
				return train.Fit(ctx, req)
			}
			for _, m := range refs {
				r, err := fit(m, false, false, solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: math.Inf(1)}})
				if err != nil {
					return err
				}
				cl.ref[m] = benchutil.Accuracy(r.Classifier, te)
			}
			fmt.Printf("\n### %s, n = %d (test %d rows)\n\n| configuration |", set, cl.n, te.Rows)
			for _, e := range epss {
				fmt.Printf(" ε = %s |", e)
			}
			fmt.Printf("\n|---|%s\n", strings.Repeat("---|", len(epss)))
			for _, c := range cfgs {
				if c.public && pubPath == "" {
					continue
				}
				cl.median[c.name] = map[string]float64{}
				fmt.Printf("| %s |", c.name)
				for _, es := range epss {
					eps, _ := strconv.ParseFloat(es, 64)
					var accs []float64
					for s := 0; s < seeds; s++ {
						var noise accounting.Noise = accounting.SeededNoise(uint64(s))
						if c.noiseless && c.quiet == "" {
							noise = noiseless{noise}
						} else if c.noiseless {
							noise = quietNoise{noise, c.quiet}
						}
						o := solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: eps, Delta: 1e-5, Noise: noise}, Transform: c.spec, Params: c.params}
						r, err := fit(c.method, c.public, c.basis, o)
						if err != nil {
							return fmt.Errorf("%s %s ε=%v: %w", set, c.name, eps, err)
						}
						accs = append(accs, benchutil.Accuracy(r.Classifier, te))
					}
					med := benchutil.Median(accs)
					cl.median[c.name][es] = med
					fmt.Printf(" %.4f |", med)
					fmt.Fprintf(os.Stderr, "%s n=%d %s ε=%s: %.4f\n", set, cl.n, c.name, es, med)
				}
				fmt.Println()
			}
			for _, m := range refs {
				fmt.Printf("| %s (non-private) |%s\n", m, strings.Repeat(fmt.Sprintf(" %.4f |", cl.ref[m]), len(epss)))
			}
			cells = append(cells, cl)
		}
	}
	if rule {
		return ruleTable(cells, epss, cfgs)
	}
	summary(cells, epss, cfgs)
	return nil
}

// ruleTable prints every cell by its n·μ (μ the GDP parameter of the
// target, δ = 1e-5: what auto's rule reads), the configurations'
// accuracies and the best.
func ruleTable(cells []cell, epss []string, cfgs []config) error {
	type line struct {
		snr  float64
		text string
	}
	var lines []line
	for _, cl := range cells {
		for _, e := range epss {
			eps, _ := strconv.ParseFloat(e, 64)
			z, _, err := accounting.Calibrate(eps, 1e-5, accounting.AccountantGDP, accounting.Options{}, accounting.GaussianReleases("one", 1))
			if err != nil {
				return err
			}
			snr := float64(cl.n) / z
			var b strings.Builder
			fmt.Fprintf(&b, "| %.0f | %s | %d | %s |", snr, cl.set, cl.n, e)
			best, bestName := -1.0, ""
			for _, c := range cfgs {
				v := cl.median[c.name][e]
				fmt.Fprintf(&b, " %.4f |", v)
				if v > best {
					best, bestName = v, c.name
				}
			}
			fmt.Fprintf(&b, " %s |", bestName)
			lines = append(lines, line{snr, b.String()})
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].snr < lines[j].snr })
	// By bands of n·μ: each configuration's mean accuracy over the cells,
	// and how often it was best.
	bands := []float64{0, 100, 400, 1200, 4000, 12000, math.Inf(1)}
	fmt.Printf("\n### auto's rule: mean accuracy by band of n·μ (δ = 1e-5)\n\n| n·μ | cells |")
	for _, c := range cfgs {
		fmt.Printf(" %s |", c.name)
	}
	fmt.Printf("\n|---|---|%s\n", strings.Repeat("---|", len(cfgs)))
	for b := 0; b+1 < len(bands); b++ {
		sum, wins, k := make([]float64, len(cfgs)), make([]int, len(cfgs)), 0
		for _, cl := range cells {
			for _, e := range epss {
				eps, _ := strconv.ParseFloat(e, 64)
				z, _, _ := accounting.Calibrate(eps, 1e-5, accounting.AccountantGDP, accounting.Options{}, accounting.GaussianReleases("one", 1))
				if snr := float64(cl.n) / z; snr < bands[b] || snr >= bands[b+1] {
					continue
				}
				k++
				best := 0
				for i, c := range cfgs {
					sum[i] += cl.median[c.name][e]
					if cl.median[c.name][e] > cl.median[cfgs[best].name][e] {
						best = i
					}
				}
				wins[best]++
			}
		}
		if k == 0 {
			continue
		}
		fmt.Printf("| %g–%g | %d |", bands[b], bands[b+1], k)
		for i := range cfgs {
			fmt.Printf(" %.4f (best %d) |", sum[i]/float64(k), wins[i])
		}
		fmt.Println()
	}
	fmt.Printf("\n### auto's rule: the configurations by n·μ\n\n| n·μ | features | n | ε |")
	for _, c := range cfgs {
		fmt.Printf(" %s |", c.name)
	}
	fmt.Printf(" best |\n|---|---|---|---|%s---|\n", strings.Repeat("---|", len(cfgs)))
	for _, l := range lines {
		fmt.Println(l.text)
	}
	return nil
}

// noiseless is a noise source whose Gaussian releases add nothing
// (accounting.Scaled with scale 0); sampling still draws from the seeded
// stream it wraps.
type noiseless struct{ accounting.Noise }

func (noiseless) GaussianScale() float64 { return 0 }

// quietNoise leaves the releases whose names start with prefix without
// noise (accounting.Quiet); the others draw from the stream it wraps.
type quietNoise struct {
	accounting.Noise
	prefix string
}

func (q quietNoise) Quiet(release string) bool { return strings.HasPrefix(release, q.prefix) }

// goals is the share of the gap the issue asks auto to recover at each ε
// (-goal).
var goals = map[string]float64{}

// before is the configuration that reproduces auto's earlier rule
// (-before); autoName is the one the summary reads as auto (-auto).
var before, autoName string

// summary prints, per table and ε, the best configuration without auto
// (today's best default method), auto's accuracy, non-private ls, and
// the share of the gap between the two that auto recovers.
func summary(cells []cell, epss []string, cfgs []config) {
	fmt.Printf("\n### auto against the best default method\n\n")
	fmt.Printf("Gap recovered: (auto − best default) / (ls − best default), when ls is above the best default.\n\n")
	if before != "" {
		fmt.Printf("Before: %s, %s's earlier rule on these cells, in the same run (same seeds).\n\n", before, autoName)
		fmt.Printf("| features | n | ε | best default | before | %s | ls | gap recovered before | after |\n|---|---|---|---|---|---|---|---|---|\n", autoName)
	} else {
		fmt.Printf("| features | n | ε | best default | auto | auto@public | ls | gap recovered |\n|---|---|---|---|---|---|---|---|\n")
	}
	for _, cl := range cells {
		for _, e := range epss {
			best, bestName := bestDefault(cl, e, cfgs)
			auto, pub, ls := cl.median[autoName][e], cl.median["auto@public"][e], cl.ref["ls"]
			bestCol := fmt.Sprintf("%.4f (%s)", best, bestName)
			if bestName == "" { // no method with its defaults in this run
				bestCol = "—"
			}
			recovered := func(v float64) string {
				if bestName != "" && ls > best+0.005 {
					return fmt.Sprintf("%.1f%%", 100*(v-best)/(ls-best))
				}
				return "—"
			}
			gap := recovered(auto)
			if before != "" {
				b := cl.median[before][e]
				fmt.Printf("| %s | %d | %s | %s | %.4f | %.4f | %.4f | %s | %s |\n", cl.set, cl.n, e, bestCol, b, auto, ls, recovered(b), gap)
				continue
			}
			ps := "—"
			if _, ok := cl.median["auto@public"]; ok {
				ps = fmt.Sprintf("%.4f", pub)
			}
			fmt.Printf("| %s | %d | %s | %s | %.4f | %s | %.4f | %s |\n", cl.set, cl.n, e, bestCol, auto, ps, ls, gap)
		}
	}
	noiseCost(cells, epss, cfgs)
}

// bestDefault is the best configuration of a cell at ε that is a method
// with its defaults (no auto, transform, public rows or removed noise).
func bestDefault(cl cell, e string, cfgs []config) (float64, string) {
	best, bestName := -1.0, ""
	for _, c := range cfgs {
		if strings.HasPrefix(c.name, "auto") || c.spec.Enabled() || c.public || c.noiseless {
			continue
		}
		if v, ok := cl.median[c.name][e]; ok && v > best {
			best, bestName = v, c.name
		}
	}
	return best, bestName
}

// noiseCost prints, for each cell with a goal at its ε (-goal), the
// target (best default + goal × (ls − best default)), auto, and the best
// configuration measured in the run; then auto with noise removed, where
// the run has it: "auto!" (every release; meaningful where auto's method
// has no noise-tuned optimiser: DPPL-Mean), with what the noise costs auto
// and what the goal allows it to cost ((auto!) − target; negative: the
// method and transform auto chose cannot reach the target even without
// noise), and "auto!RELEASE" (only those releases exact).
func noiseCost(cells []cell, epss []string, cfgs []config) {
	if len(goals) == 0 {
		return
	}
	var quiet []string
	for _, c := range cfgs {
		if c.noiseless && strings.HasPrefix(c.name, autoName+"!") {
			quiet = append(quiet, c.name)
		}
	}
	var rows strings.Builder
	head := fmt.Sprintf("| features | n | ε | goal | target | %s | best measured |", autoName)
	rule := "|---|---|---|---|---|---|---|"
	for _, q := range quiet {
		head += fmt.Sprintf(" %s |", q)
		rule += "---|"
		if q == autoName+"!" {
			head += " the noise costs | the goal allows |"
			rule += "---|---|"
		}
	}
	for _, cl := range cells {
		for _, e := range epss {
			g, ok := goals[e]
			best, bestName := bestDefault(cl, e, cfgs)
			ls := cl.ref["ls"]
			if !ok || bestName == "" || ls <= best+0.005 {
				continue
			}
			target := best + g*(ls-best)
			top, topName := -1.0, ""
			for _, c := range cfgs {
				if v, ok := cl.median[c.name][e]; ok && !c.noiseless && v > top {
					top, topName = v, c.name
				}
			}
			auto := cl.median[autoName][e]
			fmt.Fprintf(&rows, "| %s | %d | %s | %.0f%% | %.4f | %.4f | %.4f (%s) |", cl.set, cl.n, e, 100*g, target, auto, top, topName)
			for _, qn := range quiet {
				q := cl.median[qn][e]
				fmt.Fprintf(&rows, " %.4f |", q)
				if qn == autoName+"!" {
					fmt.Fprintf(&rows, " %+.1f | %+.1f |", 100*(q-auto), 100*(q-target))
				}
			}
			rows.WriteString("\n")
		}
	}
	if rows.Len() == 0 { // no cell with a goal, or no method with its defaults to set one
		return
	}
	fmt.Printf("\n### Against the goal\n\n")
	fmt.Printf("Target: best default + goal × (ls − best default). Best measured: the best configuration of this run (noise removed excluded).\n")
	if len(quiet) > 0 {
		fmt.Printf("%s!: the same fits at the same ε with every release's noise removed (calibration, ridges, clipping unchanged); the goal\n", autoName)
		fmt.Printf("allows: %s! − target. %s!NAME: only the releases whose names start with NAME exact.\n", autoName, autoName)
	}
	fmt.Printf("\n%s\n%s\n%s", head, rule, rows.String())
}
