#!/usr/bin/env bash
# dpfeat fit against an equivalent NumPy implementation on the same features,
# machine and run (Debian python3-numpy on OpenBLAS): wall seconds of dpls,
# dpfc (T = 10), dpnewton (T = 1) and dpplmean on the shared-encoder private
# half, each the best of 3; and the Gram's GFLOP/s against OpenBLAS's GEMM
# in the same run. Writes bench/results/numpy.md and rebuilds RESULTS.md.
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
		z=$(bin/dpfeat fit --method "$method" --train "bench/out/$name-private.arrow" --epsilon 1 --delta 1e-5 --out "$tmp/c" --json | grep -m1 '"multiplier"' | sed -E 's/.*: *([0-9.eE+-]+).*/\1/')
		best_go=999999
		best_np=999999
		for r in 1 2 3; do
			s=$( { /usr/bin/time -f "%e" bin/dpfeat fit --method "$method" --train "bench/out/$name-private.arrow" --epsilon 1 --delta 1e-5 --out "$tmp/c" >/dev/null; } 2>&1 | tail -1)
			best_go=$(echo "$s $best_go" | awk '{print ($1 < $2) ? $1 : $2}')
			s=$( { /usr/bin/time -f "%e" /usr/bin/python3 bench/numpy/solvers.py "$tmp/x.f32" "$tmp/y.i32" "$n" "$d" "$m" "$method" "$z" >/dev/null; } 2>&1 | tail -1)
			best_np=$(echo "$s $best_np" | awk '{print ($1 < $2) ? $1 : $2}')
		done
		ratio=$(echo "$best_go $best_np" | awk '{printf "%.2f", $1 / $2}')
		echo "| $name ($n × $d) | $method | $best_go | $best_np | $ratio |" >>"$out"
		echo "$name $method: dpfeat $best_go s, NumPy $best_np s" >&2
	done
done
{
	echo
	echo "Gram throughput in the same run (\`go test -tags openblas ./solvers -bench 'Gram|Peak'\`), 20000 × 768:"
	echo
	echo '```'
	go test $([ -n "${TAGS:-openblas}" ] && echo -tags openblas) ./solvers -run '^$' -bench 'Gram|Peak' -benchtime 5x | grep Benchmark
	echo '```'
} >>"$out"
assemble
cat "$out"
