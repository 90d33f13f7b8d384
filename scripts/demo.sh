#!/usr/bin/env bash
# The main job of dpfeat, end to end, on its embedded default: the small
# encoder in models/demo (trained on Fashion-MNIST's public half only) and
# Debian's Fashion-MNIST (installed by scripts/setup.sh). Outputs go to
# demo-out/ (git-ignored).
#   private half: train rows 30000..59999 — what the DP solvers train on;
#   test set: the 10000 test images — what results are evaluated on.
set -euo pipefail
dpfeat="${1:-bin/dpfeat}"
data=/usr/share/datasets/fashion-mnist
model=models/demo/fmnist-cnn.onnx
out=demo-out
mkdir -p "$out"

run() {
	echo "\$ dpfeat $*"
	"$dpfeat" "$@"
	echo
}

echo "== 1. Features of the private half and of the test set (frozen encoder, ONNX Runtime)"
run extract --model "$model" --data "$data" --split train --offset 30000 --limit 30000 --out "$out/private.arrow" --quiet
run extract --model "$model" --data "$data" --split test --out "$out/test.arrow" --quiet
run inspect "$out/private.arrow"

echo "== 2. The accountant: noise for (1, 1e-5)-DP over DP-LS's three releases, and DP-SGD's ε"
run privacy sigma --epsilon 1 --delta 1e-5 --releases 3
run privacy epsilon --sigma 1.1 --steps 10000 --sampling-rate 0.01 --delta 1e-5
