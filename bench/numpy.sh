#!/usr/bin/env bash
# dpfeat fit against an equivalent NumPy implementation on the same features,
# machine and run (Debian python3-numpy on OpenBLAS): wall seconds of dpls,
# dpfc (T = 10), dpnewton (T = 1) and dpplmean on the shared-encoder private
# half, each the best of 3; then dpls and dpfc at a size where compute
# dominates (200,000 × 512 synthetic float32 features, 100 classes, from
# bench/scale), with dpfeat's CPU/wall, its phases (DPFEAT_PHASES) and the
# flop estimate; and the Gram's GFLOP/s against OpenBLAS's GEMM in the same
# run. Writes bench/results/numpy.md and rebuilds RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "bench/numpy.sh: needs Debian's python3-numpy" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
out=bench/results/numpy.md
{
	echo "## dpfeat vs NumPy"
	echo
	echo "\`bench/numpy.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores; dpfeat: $(bin/dpfeat version | tail -1 | sed 's/linear algebra: //')."
	echo "Wall seconds of a whole fit at (ε = 1, δ = 1e-5), reading the features included, best of 3."
	echo
	echo "| features | method | dpfeat s | NumPy s | ratio (target ≤ 0.5) |"
	echo "|---|---|---|---|---|"
} >"$out"
for name in fmnist-resnet fmnist-vit; do
	features "$name" private
	read -r n d m < <(go run ./bench/numpy/export "bench/out/$name-private.arrow" "$tmp/x.f32" "$tmp/y.i32")
	for method in dpls dpfc dpnewton dpplmean; do
		z=$(bin/dpfeat fit --method "$method" --train "bench/out/$name-private.arrow" --epsilon 1 --delta 1e-5 --out "$tmp/c.safetensors" --force --json | grep -m1 '"multiplier"' | sed -E 's/.*: *([0-9.eE+-]+).*/\1/')
		best_go=999999
		best_np=999999
		for r in 1 2 3; do
			s=$( { /usr/bin/time -f "%e" bin/dpfeat fit --method "$method" --train "bench/out/$name-private.arrow" --epsilon 1 --delta 1e-5 --out "$tmp/c.safetensors" --force >/dev/null; } 2>&1 | tail -1)
			best_go=$(echo "$s $best_go" | awk '{print ($1 < $2) ? $1 : $2}')
			s=$( { /usr/bin/time -f "%e" /usr/bin/python3 bench/numpy/solvers.py "$tmp/x.f32" "$tmp/y.i32" "$n" "$d" "$m" "$method" "$z" >/dev/null; } 2>&1 | tail -1)
			best_np=$(echo "$s $best_np" | awk '{print ($1 < $2) ? $1 : $2}')
		done
		ratio=$(echo "$best_go $best_np" | awk '{printf "%.2f", $1 / $2}')
		echo "| $name ($n × $d) | $method | $best_go | $best_np | $ratio |" >>"$out"
		echo "$name $method: dpfeat $best_go s, NumPy $best_np s" >&2
	done
done
gflops() { go test $([ -n "${TAGS:-openblas}" ] && echo -tags openblas) ./solvers -run '^$' -bench "$1" -benchtime 5x | grep Benchmark; }
gram="$(gflops 'Gram$|PeakGEMM')"
gram_rate=$(echo "$gram" | awk '/BenchmarkGram-/{print $5}')
gemm_rate=$(echo "$gram" | awk '/BenchmarkPeakGEMM/{print $5}')

# At 200,000 × 512 × 100 (BIG_ROWS etc. to change it).
rows="${BIG_ROWS:-200000}" dim="${BIG_DIM:-512}" classes="${BIG_CLASSES:-100}"
big="bench/out/big-$rows-$dim-$classes.arrow"
go build -o bin/scale-gen ./bench/scale
[ -f "$big" ] || bin/scale-gen -out "$big" -rows "$rows" -dim "$dim" -classes "$classes" 2>/dev/null
read -r n d m < <(go run ./bench/numpy/export "$big" "$tmp/x.f32" "$tmp/y.i32")
{
	echo
	echo "### At a size where compute dominates: $n × $d float32, $m classes"
	echo
	echo "Synthetic features (\`bench/scale\`, $(du -h "$big" | cut -f1)), (ε = 1, δ = 1e-6), best of 3 wall seconds, reading included."
	echo "NumPy does the same work: float32 Grams and products (SGEMM) on 2 OpenBLAS threads, float64 solves."
	echo "dpls: dpfeat's default (Cholesky on each class's system, no projection needed here) against NumPy solving"
	echo "each system directly; \`psd=1\` projects every noisy matrix on both sides. Flop estimate: the Grams'"
	echo "n·D² (DP-FC: also 4·n·D·M per step) at this run's float64 Gram rate ($gram_rate GFLOP/s; dpfeat sums"
	echo "in float64 so that the sensitivity holds for the sum as computed) and SGEMM rate ($gemm_rate GFLOP/s),"
	echo "M·D³/3 for the Cholesky factors, 1 GB/s to read the file."
	echo
	echo "| fit | dpfeat s | NumPy s | ratio (target ≤ 0.5) | flop estimate s | dpfeat / estimate (target ≤ 2) | dpfeat CPU/wall |"
	echo "|---|---|---|---|---|---|---|"
} >>"$out"
phase_log="$tmp/phases"
: >"$phase_log"
for spec in "dpls::" "dpls:--param psd=1:psd=0" "dpfc:--steps 10:"; do
	IFS=: read -r method flags npflags <<<"$spec"
	# NumPy's dpls without projection is psd=0; with it, its default.
	[ "$method" = dpls ] && [ -z "$flags" ] && npflags=psd=0
	[ "$flags" = "--param psd=1" ] && npflags=""
	z=$(bin/dpfeat fit --method "$method" $flags --train "$big" --epsilon 1 --delta 1e-6 --out "$tmp/c.safetensors" --force --json 2>/dev/null | grep -m1 '"multiplier"' | sed -E 's/.*: *([0-9.eE+-]+).*/\1/')
	best_go=999999 best_np=999999 cpu=0
	for r in 1 2 3; do
		DPFEAT_PHASES=1 /usr/bin/time -f "%e %U %S" -o "$tmp/time" bin/dpfeat fit --method "$method" $flags --train "$big" --epsilon 1 --delta 1e-6 --out "$tmp/c.safetensors" --force 2>"$tmp/err" >/dev/null
		read -r s u k <"$tmp/time"
		if awk -v a="$s" -v b="$best_go" 'BEGIN{exit !(a < b)}'; then
			best_go=$s cpu=$(awk -v s="$s" -v u="$u" -v k="$k" 'BEGIN{printf "%.2f", (u + k) / s}')
			grep '^phase' "$tmp/err" | sed "s/^/$method $flags: /" >"$tmp/best-phases"
		fi
		ns=$( { /usr/bin/time -f "%e" /usr/bin/python3 bench/numpy/solvers.py "$tmp/x.f32" "$tmp/y.i32" "$n" "$d" "$m" "$method" "$z" $npflags >/dev/null; } 2>&1 | tail -1)
		best_np=$(echo "$ns $best_np" | awk '{print ($1 < $2) ? $1 : $2}')
	done
	cat "$tmp/best-phases" >>"$phase_log"
	est=$(awk -v n="$n" -v d="$d" -v m="$m" -v g="$gram_rate" -v s="$gemm_rate" -v meth="$method" 'BEGIN{
		t = n*d*d/(g*1e9) + n*d*4/1e9
		if (meth == "dpls") t += m*d*d*d/3/(g*1e9)
		else t += 10*4*n*(d+1)*m/(s*1e9)
		printf "%.2f", t}')
	label="$method${flags:+ $flags}"
	echo "| $label | $best_go | $best_np | $(echo "$best_go $best_np" | awk '{printf "%.2f", $1/$2}') | $est | $(echo "$best_go $est" | awk '{printf "%.2f", $1/$2}') | $cpu |" >>"$out"
	echo "$label: dpfeat $best_go s, NumPy $best_np s, estimate $est s" >&2
done
{
	echo
	echo "dpfeat's phases in its best run of each (\`DPFEAT_PHASES=1\`; wall and CPU seconds, CPU/wall = cores kept busy):"
	echo
	echo '```'
	cat "$phase_log"
	echo '```'
	echo
	echo "Gram throughput in the same run (\`go test -tags openblas ./solvers -bench 'Gram|Peak'\`), 20000 × 768:"
	echo
	echo '```'
	echo "$gram"
	echo '```'
} >>"$out"
assemble
cat "$out"
