#!/usr/bin/env bash
# Issue 35 item 16: what a command costs before it does anything. The two
# builds of `make build` in the same run: bin/dpfeat (-tags nobeam, which
# hands --runner commands to its neighbour) and bin/dpfeat-beam (Apache
# Beam and Prism linked, as every build was before). hyperfine times
# `--version` and `inspect` of a small feature file warm (page cache
# full), and each binary's first run after the page cache is dropped
# (cold; needs root, skipped otherwise). Writes bench/results/startup.md
# and rebuilds RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
make --no-print-directory setup build >/dev/null
. bench/lib.sh
command -v hyperfine >/dev/null || { echo "bench/startup.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
b=bench/out/startup
mkdir -p "$b"
feats="$b/small.arrow"
[ -f "$feats" ] || bin/dpfeat convert --in testdata/foreign/compressed.npz --out "$feats" >/dev/null
hyperfine -N -w 5 -r 40 --export-json "$b/warm.json" \
	"bin/dpfeat-beam --version" "bin/dpfeat --version" \
	"bin/dpfeat-beam inspect $feats" "bin/dpfeat inspect $feats" >/dev/null
cold() {
	local best=
	for _ in 1 2 3; do
		sync
		echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || { echo "n/a"; return; }
		local t0 t1
		t0=$(date +%s.%N)
		"$1" --version >/dev/null
		t1=$(date +%s.%N)
		best=$(echo "$t0 $t1 $best" | awk '{d=($2-$1)*1000; if ($3=="" || d<$3) printf "%.0f", d; else printf "%s", $3}')
	done
	echo "$best"
}
cb=$(cold bin/dpfeat-beam)
cs=$(cold bin/dpfeat)
{
	echo "## Start-up (bench/startup.sh)"
	echo
	echo "\`bench/startup.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores: milliseconds from exec to exit, mean ± σ of 40 warm runs;"
	echo "cold is the best of 3 first runs after dropping the page cache. bin/dpfeat-beam links Apache Beam and Prism (every"
	echo "build did before #35); bin/dpfeat is built with -tags nobeam and hands --runner commands to it."
	echo
	echo "| binary | size MB | --version warm | inspect warm | --version cold |"
	echo "|---|---|---|---|---|"
	python3 - "$b/warm.json" "$(stat -c %s bin/dpfeat-beam)" "$(stat -c %s bin/dpfeat)" "$cb" "$cs" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
def cell(cmd):
    x = r[cmd]
    return "%.1f ± %.1f" % (x["mean"] * 1000, x["stddev"] * 1000)
for name, size, cold in (("bin/dpfeat-beam", sys.argv[2], sys.argv[4]), ("bin/dpfeat", sys.argv[3], sys.argv[5])):
    ins = [c for c in r if c.startswith(name + " inspect")][0]
    print("| %s | %.0f | %s | %s | %s |" % (name, int(size) / 1e6, cell(name + " --version"), cell(ins), cold))
PY
} >bench/results/startup.md
cat bench/results/startup.md
assemble
