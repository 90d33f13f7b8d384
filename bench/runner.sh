#!/usr/bin/env bash
# Issues 24 and 42's benchmark: extraction and the fits on Apache Beam's
# Prism runner — in this process with 1 and 2 worker slots, and as a
# standalone job server (dpfeat job-server, another process) whose workers
# are processes it starts (PROCESS: dpfeat-beam is its own boot loader and
# is staged to them as on a cluster) or this process (LOOPBACK) — against
# the single-machine path, on the shared ResNet encoder's Fashion-MNIST private
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
job_server "$b" "$dp" # the standalone job server: sets ep
process=(--runner universal --runner-option "endpoint=$ep" --runner-option environment_type=PROCESS --runner-option "environment_config={\"command\": \"$PWD/$dp\"}")
loopback=(--runner universal --runner-option "endpoint=$ep" --runner-option environment_type=LOOPBACK)
modes=(single prism1 prism2 process loopback)
args=(--encoder "$enc/fmnist-resnet.onnx" --data "$data" --split train --offset 30000 --limit 30000 --encoder-batch 64 --quiet --force)
declare -A ext fitls fitmean fitpca fitfc fitsgd fitnewton
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
for r in $(seq 1 "$reps"); do
	for mode in "${modes[@]}"; do
		case $mode in
		single) out="$b/single.arrow" extra=(--threads 2) fx=() ;;
		prism1) out="$b/prism1.json" extra=(--threads 2 --runner prism --runner-workers 1) fx=(--runner prism --runner-workers 1) ;;
		prism2) out="$b/prism2.json" extra=(--threads 1 --runner prism --runner-workers 2) fx=(--runner prism --runner-workers 2) ;;
		process) out="$b/process.json" extra=(--threads 2 "${process[@]}" --runner-workers 1) fx=("${process[@]}") ;;
		loopback) out="$b/loopback.json" extra=(--threads 2 "${loopback[@]}" --runner-workers 1) fx=("${loopback[@]}") ;;
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
s1=$(seconds_best "${ext[single]}")
{
	echo "## Past one machine: Prism in-process and as a standalone job server (issues 24, 42)"
	echo
	echo "\`bench/runner.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores, $reps runs each (alternating), seconds as best / median."
	echo "Extraction: fmnist-resnet over Fashion-MNIST's private half (30,000 images, batch 64) into one file, or through"
	echo "Beam's Prism runner (in-process, loopback) into shards (four per worker slot) and a manifest; ONNX Runtime has both"
	echo "cores in every row (2 threads, or 1 per slot). Fits at ε = 1 on the file, or with --runner prism on the manifest"
	echo "(per-shard sums added by a Beam combiner, one pipeline per pass, noise on the driver): dpls and dpplmean (one"
	echo "pass), dpls after a private PCA to 64 dimensions (3 passes), dpfc (11), dpsgd (50 full-batch steps), dpnewton (1)."
	echo "The standalone rows submit to \`dpfeat job-server\` (Prism in another process) with --runner universal: PROCESS"
	echo "workers are dpfeat-beam processes the server starts for each job, which fetch the staged binary (135 MB) as a"
	echo "cluster's workers do; LOOPBACK workers are the submitting process."
	echo
	echo "| path | extract s | images/s (best) | vs one machine | dpls s | dpplmean s | pca + dpls s | dpfc s | dpsgd s | dpnewton s |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for mode in "${modes[@]}"; do
		e=$(seconds_best "${ext[$mode]}")
		label=$mode
		case $mode in single) label="one machine" ;; prism1) label="Prism, 1 worker" ;; prism2) label="Prism, 2 workers" ;;
		process) label="job server, PROCESS workers" ;; loopback) label="job server, LOOPBACK" ;; esac
		/usr/bin/python3 -c "print(f'| $label | $(seconds_stat "${ext[$mode]}") | {30000/$e:.0f} | {$s1/$e:.2f}× | $(seconds_stat "${fitls[$mode]}") | $(seconds_stat "${fitmean[$mode]}") | $(seconds_stat "${fitpca[$mode]}") | $(seconds_stat "${fitfc[$mode]}") | $(seconds_stat "${fitsgd[$mode]}") | $(seconds_stat "${fitnewton[$mode]}") |')"
	done
	echo
	echo "Reading (2026-11-26): this day's machine extracts at a third of 2026-11-23's rate on one machine (965"
	echo "images/s against 3056; not investigated), so compare rows within the table, not across days."
	echo "In-process Prism extracts at 0.91× (one worker) and 1.04× (two) the single-machine rate, as on 2026-11-23"
	echo "(0.93× and 0.89×). A standalone job server with PROCESS workers extracts at the same 0.91×: the 135 MB"
	echo "binary is staged once per job and each worker takes it from a cache by SHA-256, so the job's fixed cost"
	echo "is small beside 30,000 images. Its cost shows in the fits, one pipeline per pass: about 0.6 s per pass"
	echo "(dpsgd's 50 steps: 1.4 s on one machine, 5.4 s in-process, 31 s with PROCESS workers; dpfc's 11"
	echo "passes: 0.6, 1.4 and 7.6 s), where each pass's sums take milliseconds at D = 256. Before the cache each"
	echo "PROCESS worker fetched and copied the binary itself (0.9 s) and a single-pass fit took 2.5 s. LOOPBACK"
	echo "through the job server costs what in-process Prism costs (dpsgd 5.5 s), but extracted 12% slower here"
	echo "(not investigated)."
} >bench/results/runner.md
assemble
cat bench/results/runner.md
