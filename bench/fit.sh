#!/usr/bin/env bash
# Solver benchmark on the shared encoders' features: Fashion-MNIST private
# half (train rows 30000–59999) for training, the test set for evaluation.
# Writes bench/results/fit.md and rebuilds bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
for name in fmnist-resnet fmnist-vit; do
	features "$name" private
	features "$name" test
	go run ./bench/fit -train "bench/out/$name-private.arrow" -test "bench/out/$name-test.arrow" -label "$name" >"bench/out/fit-$name.md"
done
mkdir -p bench/results
{
	echo "## Feature-space solvers"
	echo
	echo "\`bench/fit.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores, pure-Go gonum BLAS. Training: Fashion-MNIST train rows"
	echo "30000–59999 (the private half); evaluation: the 10,000 test images; features from ../shared/encoders."
	echo "Noise seeded per run (seeds 0–4) so the table can be reproduced; real runs use the secure generator."
	echo
	cat bench/out/fit-fmnist-resnet.md
	echo
	cat bench/out/fit-fmnist-vit.md
} >bench/results/fit.md
assemble
cat bench/results/fit.md
