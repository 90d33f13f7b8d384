# Shared by the bench scripts: where the shared encoders are, and the
# feature files of Fashion-MNIST's halves and test set under bench/out/.
enc="${ENCODERS:-../shared/encoders}"
make --no-print-directory setup build >/dev/null
mkdir -p bench/out
data=/usr/share/datasets/fashion-mnist
# extract's synthetic bases (package synthbasis) go here, not into the
# user's cache.
export DPFEAT_CACHE="$PWD/bench/out/cache"

# synth_basis NAME prints the path of encoder NAME's synthetic basis (NAME:
# a shared encoder's name, or an .onnx path): what extract records for an
# encoder whose manifest names no basis (made once, into $DPFEAT_CACHE).
synth_basis() {
	local tmp model="$1"
	[[ "$model" == *.onnx ]] || model="$enc/$1.onnx"
	tmp=$(mktemp -d)
	bin/dpfeat extract --encoder "$model" --data "$data" --split test --limit 1 --out "$tmp/one.arrow" --json 2>/dev/null |
		/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["basis"])'
	rm -r "$tmp"
}

# features NAME PART: make bench/out/NAME-PART.arrow if missing; PART is
# private (train rows 30000–59999), public (train rows 0–29999) or test.
features() {
	local out="bench/out/$1-$2.arrow"
	[ -f "$out" ] && return 0
	[ -d "$enc" ] || { echo "bench: no $enc (the shared encoders); set ENCODERS" >&2; exit 1; }
	case "$2" in
		private) bin/dpfeat extract --encoder "$enc/$1.onnx" --data "$data" --split train --offset 30000 --limit 30000 --out "$out" --quiet ;;
		public) bin/dpfeat extract --encoder "$enc/$1.onnx" --data "$data" --split train --limit 30000 --out "$out" --quiet ;;
		test) bin/dpfeat extract --encoder "$enc/$1.onnx" --data "$data" --split test --out "$out" --quiet ;;
	esac
}

# publish NAME: bench/results/NAME.md.tmp, written whole by the caller
# (a failed run stops the script before this), replaces NAME.md, and
# RESULTS.md is rebuilt.
publish() {
	mv "bench/results/$1.md.tmp" "bench/results/$1.md"
	assemble
}

# assemble rebuilds bench/RESULTS.md from the committed sections in
# bench/results/, so running one benchmark keeps the others' tables.
assemble() {
	{
		echo "# Benchmark results"
		echo
		echo "Each section is written by the script it names; figures are from the machine and day it states."
		for s in fit shift shift-rule shift-basis shift-ridge shift-gate shift-public shift-ceiling shift-subspace shift-fewrows shift-holdout shift-publicfew shift-encoderbasis shift-prior shift-lp shift-lppublic shift-refine shift-span shift-distill shift-spank shift-synthbasis shift-smalld shift-goal shift-chance shift-classes shift-small prototypes largedim sweep sweep-runner views finetune finetune-views randp numpy scale extract pipeline runner startup audit; do
			[ -f "bench/results/$s.md" ] && { echo; cat "bench/results/$s.md"; }
		done
	} >bench/RESULTS.md.tmp
	mv bench/RESULTS.md.tmp bench/RESULTS.md
}

# seconds_stat "T1 T2 …" prints the best and the median, "1.2 / 1.4";
# seconds_best prints the best.
seconds_stat() { /usr/bin/python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[1].split()]; print(f'{min(v):.1f} / {statistics.median(v):.1f}')" "$1"; }
seconds_best() { /usr/bin/python3 -c "import sys; print(min(float(x) for x in sys.argv[1].split()))" "$1"; }

# job_server DIR BIN starts BIN's standalone job server on a free port,
# stopped when the script exits, and sets ep to its endpoint; its PROCESS
# workers keep their binary cache in DIR/cache (XDG_CACHE_HOME), not the
# user's.
job_server() {
	export XDG_CACHE_HOME="$PWD/$1/cache"
	"$2" job-server --port 0 >"$1/server.out" 2>"$1/server.log" &
	server=$!
	trap 'kill $server 2>/dev/null' EXIT
	for _ in $(seq 50); do grep -q 'job server at' "$1/server.out" 2>/dev/null && break; sleep 0.1; done
	ep=$(sed -n 's/^job server at \([^ ]*\).*/\1/p' "$1/server.out")
	[ -n "$ep" ] || { echo "bench: the job server did not start: $(cat "$1/server.log")" >&2; exit 1; }
}
