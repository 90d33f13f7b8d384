package sweep

import (
	"bytes"
	"encoding/base64"
	"html/template"
	"io"
	"math"
	"strconv"
)

// ReportOptions say what WriteReport shows besides the results.
type ReportOptions struct {
	// Results names the results file; Version is dpfeat's.
	Results, Version string
	// Plot tunes the plots.
	Plot PlotOptions
	// Ledger is the privacy-budget ledger's state as `dpfeat budget show`
	// prints it; empty for none.
	Ledger string
}

// WriteReport writes one self-contained HTML page: a plot per dataset
// (SVG, inline), the summary table with the guarantee of each selected
// setting, every job with its guarantee, and the ledger's state when
// given. A script marks in the page how many plots decoded
// (body[data-plots-ok]), which the test reads in a headless browser.
func WriteReport(w io.Writer, rows []Row, o ReportOptions) error {
	sel := Summarize(rows)
	type plotView struct {
		Dataset string
		Src     template.URL
	}
	type selView struct {
		Selected
		Eps, Test, Range, Guarantee string
	}
	type jobView struct {
		Row
		Eps, Test string
	}
	var view struct {
		ReportOptions
		Jobs, Failed int
		Plots        []plotView
		Summary      []selView
		AllJobs      []jobView
	}
	view.ReportOptions = o
	view.Jobs = len(rows)
	names, _ := datasets(sel)
	for _, d := range names {
		var part []Selected
		for _, s := range sel {
			if s.Dataset == d {
				part = append(part, s)
			}
		}
		var b bytes.Buffer
		if err := WritePlot(&b, "svg", part, o.Plot); err != nil {
			return err
		}
		view.Plots = append(view.Plots, plotView{Dataset: d, Src: template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(b.Bytes()))})
	}
	num := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	eps := func(v float64) string {
		if math.IsInf(v, 1) {
			return "∞"
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, s := range sel {
		g := ""
		for _, r := range rows {
			if r.Dataset == s.Dataset && r.Method == s.Method && r.Epsilon == s.Epsilon && r.Error == "" && (r.Setting == s.Setting || s.Setting == "private selection") {
				g = r.Privacy
				break
			}
		}
		view.Summary = append(view.Summary, selView{Selected: s, Eps: eps(s.Epsilon), Test: num(s.TestMedian),
			Range: num(s.TestMin) + "–" + num(s.TestMax), Guarantee: g})
	}
	for _, r := range rows {
		if r.Error != "" {
			view.Failed++
		}
		t := "–"
		if r.TestAccuracy != nil {
			t = num(*r.TestAccuracy)
		}
		view.AllJobs = append(view.AllJobs, jobView{Row: r, Eps: eps(r.Epsilon), Test: t})
	}
	return reportPage.Execute(w, view)
}

var reportPage = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dpfeat report: {{.Results}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1400px; padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
img.plot { max-width: 100%; height: auto; display: block; margin: 1rem 0; }
table { border-collapse: collapse; font-size: 0.85rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.g { font-size: 0.75rem; color: #444; max-width: 40rem; }
pre { background: #f6f6f6; padding: 0.75rem; overflow-x: auto; font-size: 0.8rem; }
</style>
</head>
<body data-plots="{{len .Plots}}">
<h1>dpfeat report: {{.Results}}</h1>
<p>{{.Jobs}} jobs ({{.Failed}} failed), made by dpfeat {{.Version}}. The summary selects, per dataset, method and ε,
the setting with the best median validation accuracy and reports its test accuracy (median and min–max over seeds);
never selection on the test set. Each row's privacy guarantee is the one its classifier carries.</p>
<h2>Test accuracy against ε</h2>
{{range .Plots}}<img class="plot" alt="test accuracy against ε for {{.Dataset}}" src="{{.Src}}">
{{end}}
<h2>Summary</h2>
<table>
<tr><th>dataset</th><th>method</th><th>ε</th><th>setting</th><th>seeds</th><th>test accuracy</th><th>min–max</th><th>tuning</th><th>guarantee</th></tr>
{{range .Summary}}<tr><td>{{.Dataset}}</td><td>{{.Method}}</td><td class="n">{{.Eps}}</td><td>{{.Setting}}</td><td class="n">{{.Seeds}}</td><td class="n">{{.Test}}</td><td class="n">{{.Range}}</td><td>{{.Tuning}}</td><td class="g">{{.Guarantee}}</td></tr>
{{end}}</table>
<h2>Jobs</h2>
<details><summary>every job ({{.Jobs}}) with its guarantee</summary>
<table>
<tr><th>job</th><th>dataset</th><th>method</th><th>ε</th><th>setting</th><th>seed</th><th>test accuracy</th><th>guarantee or error</th></tr>
{{range .AllJobs}}<tr><td class="n">{{.Job}}</td><td>{{.Dataset}}</td><td>{{.Method}}</td><td class="n">{{.Eps}}</td><td>{{.Setting}}</td><td class="n">{{.Seed}}</td><td class="n">{{.Test}}</td><td class="g">{{if .Error}}error: {{.Error}}{{else}}{{.Privacy}}{{end}}</td></tr>
{{end}}</table>
</details>
{{if .Ledger}}<h2>Privacy budget</h2>
<pre>{{.Ledger}}</pre>
{{end}}<script>
// How many plots decoded: the report's test reads it in a headless browser.
window.addEventListener("load", function () {
  var ok = 0;
  document.querySelectorAll("img.plot").forEach(function (img) { if (img.complete && img.naturalWidth > 0) ok++; });
  document.body.setAttribute("data-plots-ok", String(ok));
});
</script>
</body>
</html>
`))
