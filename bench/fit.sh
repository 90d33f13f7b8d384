#!/usr/bin/env bash
# Solver benchmark on the shared encoders' features: Fashion-MNIST private
# half (train rows 30000–59999) for training, the test set for evaluation.
# Writes bench/RESULTS.md (the solver tables) via bench/out/fit-*.md.
set -euo pipefail
cd "$(dirname "$0")/.."
enc="${ENCODERS:-../shared/encoders}"
[ -d "$enc" ] || { echo "bench/fit.sh: no $enc (the shared encoders); set ENCODERS" >&2; exit 1; }
make --no-print-directory setup build >/dev/null
mkdir -p bench/out
data=/usr/share/datasets/fashion-mnist
for name in fmnist-resnet fmnist-vit; do
	[ -f "bench/out/$name-private.arrow" ] || bin/dpfeat extract --model "$enc/$name.onnx" --data "$data" --split train --offset 30000 --limit 30000 --out "bench/out/$name-private.arrow" --quiet
	[ -f "bench/out/$name-test.arrow" ] || bin/dpfeat extract --model "$enc/$name.onnx" --data "$data" --split test --out "bench/out/$name-test.arrow" --quiet
	go run ./bench/fit -train "bench/out/$name-private.arrow" -test "bench/out/$name-test.arrow" -label "$name" >"bench/out/fit-$name.md"
done
{
	echo "# Solver benchmark"
	echo
	echo "\`bench/fit.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores, pure-Go gonum BLAS. Training: Fashion-MNIST train rows"
	echo "30000–59999 (the private half); evaluation: the 10,000 test images; features from ../shared/encoders."
	echo "Noise seeded per run (seeds 0–4) so the table can be reproduced; real runs use the secure generator."
	echo
	cat bench/out/fit-fmnist-resnet.md
	echo
	cat bench/out/fit-fmnist-vit.md
} >bench/RESULTS.md
cat bench/RESULTS.md
