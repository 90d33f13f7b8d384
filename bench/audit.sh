#!/usr/bin/env bash
# The long empirical privacy audit (make audit): every audited method at
# ε = 8, δ = 1e-5, 1000 runs per side (about what detects a 2× sensitivity
# bug 95% of the time with the likelihood-ratio statistic), fresh secure
# noise. Writes bench/results/audit.md and rebuilds RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
runs="${AUDIT_RUNS:-1000}"
out=bench/results/audit.md
{
	echo "## Empirical privacy audit"
	echo
	echo "\`make audit\` (bench/audit.sh), $(date -u +%Y-%m-%d): \`dpfeat audit --epsilon 8 --delta 1e-5 --runs $runs\` per method"
	echo "(hyperparameters at their defaults; dpfc, dpsgd, dplp with 10 steps to keep it short; dpsgd-poisson: batch 150 of 201,"
	echo "3 steps, accounted by RDP and checked against its RDP curve order by order; the prototypes at δ = 0, audited on ε). D: 200 rows × 8,"
	echo "3 classes, zero in coordinate 0 (for dpsgd-poisson one row of class 0); D′ adds the canary e₀ (dplp: (e₀ − û)/√2; the -norm100 rows: 100·e₀, the neighbour a method sees under --no-normalize) with label 0. Bounds hold with probability 0.95."
	echo "μ canary: what an exact test of this canary would show (the statistic's separation); μ_LB is that less the finite-sample loss."
	echo
	echo "| method | statistic | μ_LB | μ canary | μ claimed | μ_LB / μ claimed | ε_LB | ε claimed | Rényi LB / claim (α) | FPR / FNR | verdict |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$out"
for m in dpls dpplmean dpfc dpnewton dpsgd dpsgd-poisson dplp dpplpublic dpplpublick dpplpublic-norm100 dpplpublick-norm100; do
	extra=(--delta 1e-5)
	case $m in
		*-norm100) extra=(--delta 0 --canary-norm 100) ;;
		dpfc|dpsgd|dplp) extra+=(--param steps=10) ;;
		dpsgd-poisson) extra+=(--param steps=3 --param batch=150) ;;
		dpplpublic|dpplpublick) extra=(--delta 0) ;;
	esac
	base="${m%-poisson}"
	base="${base%-norm100}"
	j=$(bin/dpfeat audit --method "$base" --epsilon 8 --runs "$runs" --json "${extra[@]}" || true)
	echo "$j" | /usr/bin/python3 -c "
import json, sys
r = json.load(sys.stdin)
mu = r['mu_claimed']
st = r['statistic']
stat = ('likelihood ratio, exact shifts' if '$m' in ('dpls', 'dpplmean') else ('likelihood ratio, shifts at each step' if 'each step' in st else 'likelihood ratio, shifts at the start')) if st.startswith('likelihood') else ('canary prototypes chosen' if st.startswith('whether') else 'class-0 weight')
mus = f\"{mu:.3f} | {r['mu_lower_bound'] / mu:.2f}\" if mu else '– (not GDP) | –'
mc = r.get('mu_canary')
mcs = f'{mc:.3f}' if mc else '–'
rr = r.get('renyi_lower_bound_over_claim')
rrs = f\"{rr:.2f} ({r['renyi_order']:g})\" if rr is not None else '–'
print(f\"| $m | {stat} | {r['mu_lower_bound']:.3f} | {mcs} | {mus} | {r['epsilon_lower_bound']:.3f} | {r['epsilon_claimed']:.3f} | {rrs} | {r['fpr']:.3f} / {r['fnr']:.3f} | {'pass' if r['pass'] else 'FAIL'} |\")" >>"$out"
	tail -1 "$out" >&2
done
# Neighbours from the user's starting point (#36): two sources that differ
# by one image — Fashion-MNIST's test images 1–1999 and 0–1999 — each
# extracted with two augmented views by the demo encoder; dpls on the two
# files, the statistic along their noiseless shift.
nb=bench/out/audit-neighbours
mkdir -p "$nb"
for part in "d --offset 1 --limit 1999" "d2 --limit 2000"; do
	set -- $part
	name=$1
	shift
	[ -f "$nb/$name.arrow" ] || bin/dpfeat extract --encoder models/demo/fmnist-cnn.onnx --data "$data" --split test "$@" \
		--views 2 --augment flip,crop=2 --out "$nb/$name.arrow" --quiet
done
j=$(bin/dpfeat audit --method dpls --epsilon 8 --delta 1e-5 --runs "$runs" --json --neighbours "$nb/d.arrow,$nb/d2.arrow" || true)
echo "$j" | /usr/bin/python3 -c "
import json, sys
r = json.load(sys.stdin)
mu = r['mu_claimed']
mc = r.get('mu_canary')
mcs = f'{mc:.3f}' if mc else '–'
print(f\"| dpls-source-views | likelihood ratio along the neighbours' shift (one image of the source, 2 views) | {r['mu_lower_bound']:.3f} | {mcs} | {mu:.3f} | {r['mu_lower_bound'] / mu:.2f} | {r['epsilon_lower_bound']:.3f} | {r['epsilon_claimed']:.3f} | – | {r['fpr']:.3f} / {r['fnr']:.3f} | {'pass' if r['pass'] else 'FAIL'} |\")" >>"$out"
tail -1 "$out" >&2
{
	echo
	echo "Broken copies: the same audits (1000 runs per side, ε = 8) with a test-only noise source at half the calibrated"
	echo "standard deviation — twice the true μ (\`DPFEAT_LONG_AUDIT=1 go test ./audit -run LongAuditBroken\`):"
	echo
	echo "| method | μ claimed | μ canary | μ_LB, correct | μ_LB, noise halved | broken copy |"
	echo "|---|---|---|---|---|---|"
	DPFEAT_LONG_AUDIT=1 go test -count=1 -timeout 2h ./audit -run LongAuditBroken -v 2>&1 | grep -o 'BROKEN | .*' | sed 's/^BROKEN //'
	echo
	echo "Poisson-sampled DP-SGD (batch 150 of 201, 3 steps, ε = 8, 1000 runs per side), correct and with the noise halved, ten audits each:"
	echo "the largest Rényi lower bound over the claimed RDP curve, $(DPFEAT_LONG_AUDIT=1 go test -count=1 -timeout 2h ./audit -run LongAuditPoisson -v 2>&1 | grep -o 'POISSON .*' | sed 's/^POISSON //')."
	echo
	echo "The exponential mechanisms at ε = 2 (2000 runs per side), correct and with the exponent doubled (a halved sensitivity:"
	echo "the mechanism at 2ε) while claiming ε = 2: $(go test -count=1 ./audit -run BrokenExponential -v 2>&1 | grep -o 'dpplpublic.* at ε = 2: .*' | paste -sd ';' | sed 's/;/; /g')."
	echo
	echo "DP-LS's and DPPL-Mean's statistic uses exact shifts; DP-FC's, DP-SGD's and DP-Newton's the canary's exact"
	echo "gradient (and Hessian) at each step's reported state, on e₀ and on the bias coordinate less D's known part; DP-LP's"
	echo "canary is (e₀ − û)/√2, û D's mean direction (its centred gradient stays clipped), read at each step on every coordinate."
	echo "DPPL-Public(K): class 0's K prototypes are e₀ and K − 1 anchors, among decoys −e₀."
} >>"$out"
assemble
cat "$out"
