#!/usr/bin/env bash
# DP prototypes on imbalanced data with the shared encoders: private half
# (train rows 30000–59999) made long-tailed, public half (rows 0–29999) as
# unlabeled public data, the test set for evaluation. Appends the tables to
# bench/RESULTS.md (after the solver tables of bench/fit.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
enc="${ENCODERS:-../shared/encoders}"
[ -d "$enc" ] || { echo "bench/prototypes.sh: no $enc (the shared encoders); set ENCODERS" >&2; exit 1; }
make --no-print-directory setup build >/dev/null
mkdir -p bench/out
data=/usr/share/datasets/fashion-mnist
for name in fmnist-resnet fmnist-vit; do
	[ -f "bench/out/$name-private.arrow" ] || bin/dpfeat extract --model "$enc/$name.onnx" --data "$data" --split train --offset 30000 --limit 30000 --out "bench/out/$name-private.arrow" --quiet
	[ -f "bench/out/$name-test.arrow" ] || bin/dpfeat extract --model "$enc/$name.onnx" --data "$data" --split test --out "bench/out/$name-test.arrow" --quiet
	[ -f "bench/out/$name-public.arrow" ] || bin/dpfeat extract --model "$enc/$name.onnx" --data "$data" --split train --limit 30000 --out "bench/out/$name-public.arrow" --quiet
	go run ./bench/prototypes -train "bench/out/$name-private.arrow" -test "bench/out/$name-test.arrow" -public "bench/out/$name-public.arrow" -label "$name" >"bench/out/prototypes-$name.md"
done
{
	echo
	echo "## DP prototypes on imbalanced data"
	echo
	echo "\`bench/prototypes.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores. Private half made long-tailed with the Cui et al."
	echo "profile (n_max = the smallest class of the half), public set = train rows 0–29999 without labels,"
	echo "evaluation on the balanced test set. Default hyperparameters; noise seeded 0–4 for reproducibility."
	echo "Minority classes: the 25% of classes with the fewest training rows."
	echo
	cat bench/out/prototypes-fmnist-resnet.md
	cat bench/out/prototypes-fmnist-vit.md
} >bench/out/prototypes-section.md
# Replace an earlier prototypes section, keep the solver tables.
awk '/^## DP prototypes on imbalanced data/{exit} {print}' bench/RESULTS.md >bench/out/results-head.md
cat bench/out/results-head.md bench/out/prototypes-section.md >bench/RESULTS.md
cat bench/out/prototypes-section.md
