#!/usr/bin/env bash
# The main job of dpfeat, end to end, on its embedded default: the small
# encoder in models/demo (trained on Fashion-MNIST's public half only) and
# Debian's Fashion-MNIST (installed by scripts/setup.sh). Outputs go to
# demo-out/ (git-ignored), replaced on each run (--force).
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
run extract --encoder "$model" --data "$data" --split train --offset 30000 --limit 30000 --out "$out/private.arrow" --force
run extract --encoder "$model" --data "$data" --split test --out "$out/test.arrow" --force
run inspect "$out/private.arrow"

echo "== 2. A classifier with (1, 1e-5)-differential privacy (auto: the method and feature transform for this n and ε), and the non-private reference"
run fit --method auto --train "$out/private.arrow" --epsilon 1 --delta 1e-5 --out "$out/auto.safetensors" --force
run fit --method newton --train "$out/private.arrow" --epsilon inf --out "$out/newton.safetensors" --force

echo "== 3. Test accuracy"
"$dpfeat" eval --classifier "$out/auto.safetensors" --test "$out/test.arrow" --json >"$out/auto-eval.json"
"$dpfeat" eval --classifier "$out/newton.safetensors" --test "$out/test.arrow" --json >"$out/newton-eval.json"
acc() { grep -m1 '"accuracy"' "$1" | tr -dc '0-9.'; }
printf '  auto at (ε = 1, δ = 1e-5): accuracy %s\n' "$(acc "$out/auto-eval.json")"
printf '  non-private Newton (ε = ∞): accuracy %s\n' "$(acc "$out/newton-eval.json")"
echo
echo "== 4. The accountant as a calculator"
run privacy sigma --epsilon 1 --delta 1e-5 --releases 11
echo
bin_path="$(cd "$(dirname "$dpfeat")" && pwd)/$(basename "$dpfeat")"
echo "== The binary is $bin_path. To run it as plain \`dpfeat\` from anywhere:"
echo "   make install                        # into ~/.local/bin (PREFIX=… for elsewhere), with the ONNX Runtime library it needs"
echo "   export PATH=\"\$HOME/.local/bin:\$PATH\"   # if ~/.local/bin is not on PATH yet"
