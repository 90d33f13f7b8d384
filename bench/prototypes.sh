#!/usr/bin/env bash
# DP prototypes on imbalanced data with the shared encoders: private half
# (train rows 30000–59999) made long-tailed, public half (rows 0–29999) as
# unlabeled public data, the test set for evaluation. Writes
# bench/results/prototypes.md and rebuilds bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
for name in fmnist-resnet fmnist-vit; do
	features "$name" private
	features "$name" test
	features "$name" public
	go run ./bench/prototypes -train "bench/out/$name-private.arrow" -test "bench/out/$name-test.arrow" -public "bench/out/$name-public.arrow" -label "$name" >"bench/out/prototypes-$name.md"
done
mkdir -p bench/results
{
	echo "## DP prototypes on imbalanced data"
	echo
	echo "\`bench/prototypes.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores. Private half made long-tailed with the Cui et al."
	echo "profile by a per-row rule (each row of class c kept with probability IR^(−c/9)), public set = train rows 0–29999 without labels,"
	echo "evaluation on the balanced test set. Default hyperparameters; noise seeded 0–4 for reproducibility."
	echo "Minority classes: the 25% of classes the profile makes smallest (the last three; at IR = 1, ties, the first three)."
	echo
	cat bench/out/prototypes-fmnist-resnet.md
	cat bench/out/prototypes-fmnist-vit.md
} >bench/results/prototypes.md
assemble
cat bench/results/prototypes.md
