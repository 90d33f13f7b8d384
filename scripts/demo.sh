#!/usr/bin/env bash
# The main job of dpfeat, end to end, on its embedded defaults. For now that
# is the accountant every release is calibrated and reported with; the
# extract → fit → eval pipeline joins it as it lands.
set -euo pipefail
dpfeat="${1:-bin/dpfeat}"

run() {
	echo "\$ dpfeat $*"
	"$dpfeat" "$@"
	echo
}

echo "== How much noise does DP-LS (3 Gaussian releases) need for (1, 1e-5)-DP?"
run privacy sigma --epsilon 1 --delta 1e-5 --releases 3
echo "== What does DP-SGD with σ = 1.1, q = 0.01, 10000 steps give at δ = 1e-5?"
run privacy epsilon --sigma 1.1 --steps 10000 --sampling-rate 0.01 --delta 1e-5
echo "== The same ρ = 0.5 converted two ways (CKS 2020 and the papers' simple bound)"
run privacy epsilon --rho 0.5 --delta 1e-7
run privacy epsilon --rho 0.5 --delta 1e-7 --conversion simple
echo "== δ at ε = 1 for 11 full-batch releases with σ = 8, as JSON"
run privacy delta --epsilon 1 --sigma 8 --releases 11 --json
