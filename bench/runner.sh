#!/usr/bin/env bash
# Issue 24's benchmark: extraction and a one-pass fit on Apache Beam's
# Prism runner (in this process) with 1 and 2 worker slots against the
# single-machine path, on the shared ResNet encoder's Fashion-MNIST private
# half (30,000 images, train rows 30000 on). Each configuration runs REPS
# times, alternating; the table gives the best and the median. ONNX
# Runtime gets both cores in every configuration: 2 threads for the single
# machine and one slot, 1 thread per slot for two. The fits (ε = 1) read
# the single-machine file or the manifest: dpls and dpplmean (one pass),
# dpls after a private PCA (three passes), dpfc (11 passes), dpsgd (50
# full-batch steps) and dpnewton (one pass).
# Writes bench/results/runner.md and rebuilds RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
b=bench/out/runner
mkdir -p "$b"
dp="$b/dpfeat"
cp bin/dpfeat-beam "$dp" # the Beam build (bin/dpfeat hands --runner to it)
reps="${REPS:-3}"
args=(--encoder "$enc/fmnist-resnet.onnx" --data "$data" --split train --offset 30000 --limit 30000 --encoder-batch 64 --quiet --force)
declare -A ext fitls fitmean fitpca fitfc fitsgd fitnewton
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
for r in $(seq 1 "$reps"); do
	for mode in single prism1 prism2; do
		case $mode in
		single) out="$b/single.arrow" extra=(--threads 2) fx=() ;;
		prism1) out="$b/prism1.json" extra=(--threads 2 --runner prism --runner-workers 1) fx=(--runner prism --runner-workers 1) ;;
		prism2) out="$b/prism2.json" extra=(--threads 1 --runner prism --runner-workers 2) fx=(--runner prism --runner-workers 2) ;;
		esac
		ext[$mode]+="$(secs "$dp" extract "${args[@]}" "${extra[@]}" --out "$out") "
		fitls[$mode]+="$(secs "$dp" fit --method dpls --train "$out" --epsilon 1 --delta 1e-5 --out "$b/c.safetensors" --force "${fx[@]}") "
		fitmean[$mode]+="$(secs "$dp" fit --method dpplmean --train "$out" --epsilon 1 --delta 1e-5 --out "$b/c.safetensors" --force "${fx[@]}") "
		fitpca[$mode]+="$(secs "$dp" fit --method dpls --transform pca --transform-dims 64 --train "$out" --epsilon 1 --delta 1e-5 --out "$b/c.safetensors" --force "${fx[@]}") "
		fitfc[$mode]+="$(secs "$dp" fit --method dpfc --train "$out" --epsilon 1 --delta 1e-5 --out "$b/c.safetensors" --force "${fx[@]}") "
		fitsgd[$mode]+="$(secs "$dp" fit --method dpsgd --train "$out" --epsilon 1 --delta 1e-5 --out "$b/c.safetensors" --force "${fx[@]}") "
		fitnewton[$mode]+="$(secs "$dp" fit --method dpnewton --train "$out" --epsilon 1 --delta 1e-5 --out "$b/c.safetensors" --force "${fx[@]}") "
		echo "runner: $mode run $r: extract ${ext[$mode]##* }" >&2
	done
done
stat() { /usr/bin/python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[1].split()]; print(f'{min(v):.1f} / {statistics.median(v):.1f}')" "$1"; }
best() { /usr/bin/python3 -c "import sys; print(min(float(x) for x in sys.argv[1].split()))" "$1"; }
s1=$(best "${ext[single]}")
{
	echo "## Past one machine: Prism with 1 and 2 workers (issue 24)"
	echo
	echo "\`bench/runner.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores, $reps runs each (alternating), seconds as best / median."
	echo "Extraction: fmnist-resnet over Fashion-MNIST's private half (30,000 images, batch 64) into one file, or through"
	echo "Beam's Prism runner (in-process, loopback) into shards (four per worker slot) and a manifest; ONNX Runtime has both"
	echo "cores in every row (2 threads, or 1 per slot). Fits at ε = 1 on the file, or with --runner prism on the manifest"
	echo "(per-shard sums added by a Beam combiner, one pipeline per pass, noise on the driver): dpls and dpplmean (one"
	echo "pass), dpls after a private PCA to 64 dimensions (3 passes), dpfc (11), dpsgd (50 full-batch steps), dpnewton (1)."
	echo
	echo "| path | extract s | images/s (best) | vs one machine | dpls s | dpplmean s | pca + dpls s | dpfc s | dpsgd s | dpnewton s |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for mode in single prism1 prism2; do
		e=$(best "${ext[$mode]}")
		label=$mode
		case $mode in single) label="one machine" ;; prism1) label="Prism, 1 worker" ;; prism2) label="Prism, 2 workers" ;; esac
		/usr/bin/python3 -c "print(f'| $label | $(stat "${ext[$mode]}") | {30000/$e:.0f} | {$s1/$e:.2f}× | $(stat "${fitls[$mode]}") | $(stat "${fitmean[$mode]}") | $(stat "${fitpca[$mode]}") | $(stat "${fitfc[$mode]}") | $(stat "${fitsgd[$mode]}") | $(stat "${fitnewton[$mode]}") |')"
	done
	echo
	echo "Reading (2026-11-23): Prism with one worker extracts at 0.93–0.97 times the single-machine rate (the pipeline,"
	echo "the shards' separate files and each shard's skip to its offset in the gzipped source). On one 2-core machine a"
	echo "second worker cannot add cores — ONNX Runtime already has both — so two slots of one thread are 4–6% slower than"
	echo "one of two: the scaling a cluster gives comes from its machines, which this benchmark cannot show. The first"
	echo "pipeline of a fit costs about 0.2 s to start; each further pass about 30 ms here (dpsgd's 50 steps: 0.7 s → 2.1 s;"
	echo "dpfc's 11 passes: 0.2 → 0.6 s), where at D = 256 a pass computes in a few milliseconds: with D in the thousands"
	echo "or millions of rows the sums dominate, as on one machine. Before the extraction stage got an output across a"
	echo "reshuffle, Prism (v2.77) polled in a busy loop for the whole of each bundle and the same extraction took 2.6"
	echo "times as long."
} >bench/results/runner.md
assemble
cat bench/results/runner.md
