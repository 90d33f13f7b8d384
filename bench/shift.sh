#!/usr/bin/env bash
# Shifted-feature benchmark (issue 18): images unlike the encoders' training
# data (bench/shift/make.py: Fashion-MNIST inverted, rotated 90°, blurred,
# edge-filtered; scikit-learn's digits upscaled) through both shared
# encoders, then every method with defaults and auto at several n and ε
# next to non-private ls/logreg (bench/shift/run). Writes
# bench/results/shift.md. Needs: make setup; Debian's python3-numpy and
# python3-sklearn.
#   bench/shift.sh extract   only make the feature files (bench/out/shift-*)
#   bench/shift.sh rule      auto's rule table (bench/results/shift-rule.md)
#   bench/shift.sh basis     small data with and without a public basis (bench/results/shift-basis.md)
#   bench/shift.sh ridge     small data: auto's sample-ridge rule against its earlier one (bench/results/shift-ridge.md)
#   bench/shift.sh gate      below n·μ = 100: auto's gated whitening against no transform (bench/results/shift-gate.md)
#   bench/shift.sh public    small data with public features: auto@public against a candidate rule (bench/results/shift-public.md)
#   bench/shift.sh subspace  small data with a public basis: whitening within its subspace (bench/results/shift-subspace.md)
#   bench/shift.sh fewrows   small data: the sample ridge and DP-SGD's clip and steps with at most 16·D rows (bench/results/shift-fewrows.md)
#   bench/shift.sh publicfew small data with public features: the private rule with at most 16·D rows (bench/results/shift-publicfew.md)
#   bench/shift.sh encoderbasis small data: auto with the encoder's basis (its manifest's) against without (bench/results/shift-encoderbasis.md)
#   bench/shift.sh prior     small data: the encoder's basis as the prior of DP-SGD's whitening, not adopted (bench/results/shift-prior.md)
#   bench/shift.sh lp        DP-LP where auto fitted DP-SGD, from n·μ = 500 (700 above 16·D rows) to 2500 (bench/results/shift-lp.md)
#   bench/shift.sh lppublic  the same with public features (bench/results/shift-lppublic.md)
#   bench/shift.sh holdout   the few-rows rule on two shifts it was not derived from (bench/results/shift-holdout.md)
#   bench/shift.sh classes   small data with 2 and 5 classes: DPPL-Mean's bands end at n·μ = 300·M/10 (bench/results/shift-classes.md)
#   bench/shift.sh refine    small data with public features: DPPL-Mean's prototypes refined on them (bench/results/shift-refine.md)
#   bench/shift.sh span      small data with public features: DPPL-Mean within the span of their clusters (bench/results/shift-span.md)
#   bench/shift.sh ceiling   small data: auto against issue 41's targets, what its noise costs and the best measured (bench/results/shift-ceiling.md)
#   bench/shift.sh synthbasis small data: auto with the encoder's synthetic basis (random-process images, what extract now records) against without (bench/results/shift-synthbasis.md)
#   bench/shift.sh smalld    small data on a third, smaller encoder (the demo CNN, D = 64): the basis's subspace against the feature dimension (bench/results/shift-smalld.md)
#   bench/shift.sh chance    small data: auto's accuracy at the lowest n·μ, by the number of classes, for its near-chance note (bench/results/shift-chance.md)
#   bench/shift.sh goal      issue 41's goal: auto and auto@public before the issue's work and now, per cell, and the no-loss check at n ≥ 6,000 (bench/results/shift-goal.md)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
img=bench/out/shift-images
[ -f "$img/digits/t10k-labels-idx1-ubyte.gz" ] || /usr/bin/python3 bench/shift/make.py "$data" "$img"
# shift_features MODEL NAME VARIANT [public] makes, where missing,
# bench/out/shift-VARIANT-NAME-{private,test}.arrow through encoder MODEL:
# train rows 30000–59999 (digits: all its train rows) and the test rows;
# with public, also -public.arrow, train rows 0–29999 (digits has none).
shift_features() {
	local o="bench/out/shift-$3-$2" model="$1" v="$3"
	x() { [ -f "$o-$1.arrow" ] || bin/dpfeat extract --encoder "$model" --data "$img/$v" --split "$2" "${@:3}" --out "$o-$1.arrow" --quiet; }
	if [ "$v" = digits ]; then
		x private train
	else
		x private train --offset 30000 --limit 30000
		[ "${4:-}" = public ] && x public train --limit 30000
	fi
	x test test
}
for e in fmnist-resnet fmnist-vit; do
	for v in invert rot90 blur edge digits; do
		shift_features "$enc/$e.onnx" "$e" "$v" public
	done
done
[ "${1:-}" = extract ] && exit 0
# holdout_sets makes the feature files of the two shifts no rule was
# derived from (bench/shift/make.py holdout: pixel noise, the image at half
# size in a corner) and sets hsets to their names.
holdout_sets() {
	[ -f "$img/corner/t10k-labels-idx1-ubyte.gz" ] || /usr/bin/python3 bench/shift/make.py "$data" "$img" holdout
	hsets=
	for e in fmnist-resnet fmnist-vit; do
		for v in noise corner; do
			shift_features "$enc/$e.onnx" "$e" "$v"
			hsets="${hsets:+$hsets,}$v-$e"
		done
	done
}
sets=fmnist-resnet,fmnist-vit
psets=$sets # those with public rows (train rows 0–29999): digits has none
for e in fmnist-resnet fmnist-vit; do
	for v in invert rot90 blur edge digits; do
		sets="$sets,$v-$e"
		[ "$v" = digits ] || psets="$psets,$v-$e"
	done
done
if [ "${1:-}" = basis ]; then
	# #41: the small-data band with and without a public basis (the
	# encoder's own training features, Fashion-MNIST train rows 0–29999),
	# next to every method with its defaults; n·μ 50–1000.
	for e in fmnist-resnet fmnist-vit; do features "$e" public; done
	{
		echo "## Small data with a public basis (issue 41)"
		echo
		echo "\`bench/shift.sh basis\`, $(date -u +%Y-%m-%d), $(nproc) cores: the shifted and in-distribution sets at n ≈ 600 (ε = 0.3, 1, 8)"
		echo "and n ≈ 6,000 (ε = 0.1), medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto@basis: \`fit --method auto"
		echo "--transform-basis\` with the encoder's own public features (bench/out/fmnist-ENCODER-public.arrow); the methods with"
		echo "their defaults give the gap's baseline (the best of them), non-private ls its top."
		go run ./bench/shift/run -rule -sets "$sets" -n 600 -eps 1,8 -seeds "${SEEDS:-5}" \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,auto@basis
		go run ./bench/shift/run -rule -sets "$sets" -n 600 -eps 0.3 -seeds "${SEEDS:-5}" -configs auto,auto@basis
		go run ./bench/shift/run -rule -sets "$sets" -n 6000 -eps 0.1 -seeds "${SEEDS:-5}" -configs auto,auto@basis
	} | tee bench/results/shift-basis.md.tmp
	publish shift-basis
	exit 0
fi
if [ "${1:-}" = subspace ]; then
	# #41: auto given a basis whitens privately within its top 32
	# directions at n·μ 100–300 with at most 16·D rows
	# (solvers.AutoFewRows) instead of in all D, which is auto's rule
	# without a basis (the "auto" rows: what auto@basis did before).
	# n ≈ 600 at ε = 0.75, 1, 1.5 (n·μ ≈ 125, 165, 230), n ≈ 2,000 at
	# ε = 0.3 (≈ 180) and n ≈ 6,000 at ε = 0.1 (≈ 195; above 16·D for
	# both encoders: auto@basis unchanged, the subspace's whitening shown
	# beside it).
	{
		echo "## Small data: whitening within a public basis's subspace (issue 41)"
		echo
		echo "\`bench/shift.sh subspace\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto@basis:"
		echo "\`fit --method auto --transform-basis\` with the encoder's own public features (bench/out/fmnist-ENCODER-public.arrow),"
		echo "which from n·μ = 100 to 300 with at most 16·D rows now whitens privately within the basis's top 32 directions"
		echo "(\`--transform whiten --transform-basis-subspace\`); auto: the rule without a basis, what auto@basis did there before."
		echo "The summaries read auto@basis as auto. dpplmean+whiten^sample@subspace: the subspace's whitening (32 directions) where auto@basis"
		echo "does not choose it, for the bounds of the rule."
		go run ./bench/shift/run -sets "$sets" -n 600 -eps 0.75,1,1.5 -seeds "${SEEDS:-5}" -refs ls \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,auto@basis,dpplmean+whiten^sample@subspace -auto auto@basis -before auto -goal 1=0.5
		go run ./bench/shift/run -sets "$sets" -n 2000 -eps 0.3 -seeds "${SEEDS:-5}" -refs ls -configs auto,auto@basis,dpplmean+whiten^sample@subspace -auto auto@basis -before auto
		go run ./bench/shift/run -sets "$sets" -n 6000 -eps 0.1 -seeds "${SEEDS:-5}" -refs ls -configs auto,auto@basis,dpplmean+whiten^sample@subspace -auto auto@basis -before auto
		# What its noise costs at n ≈ 600, ε = 1: the same fits with every
		# release's noise removed (!), only the class sums exact (!sums),
		# only the transform's releases exact (!transform).
		s=dpplmean+whiten^sample@subspace
		go run ./bench/shift/run -sets "$sets" -n 600 -eps 1 -seeds "${SEEDS:-5}" -refs ls \
			-configs "dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,$s,$s!,$s!sums,$s!transform" -auto "$s" -goal 1=0.5
	} | tee bench/results/shift-subspace.md.tmp
	publish shift-subspace
	exit 0
fi
if [ "${1:-}" = fewrows ]; then
	# #41: with at most 16·D training rows (solvers.AutoFewRows) auto's
	# whitening takes the sample ridge at every n·μ, not only below 700,
	# and its DP-SGD clip 0.5 and 100 steps (solvers.AutoFewRowsSGD):
	# auto against its earlier choice on each cell, same seeds, with the
	# ridge alone (dpsgd+whiten^sample) beside it. n ≈ 600 at ε = 8
	# (n·μ ≈ 1050: DP-SGD, the noise ridge before) with every method's
	# defaults for the goal (80% of the gap), at ε = 3 and 4 (≈ 430, 555:
	# DP-SGD, the sample ridge before); n ≈ 2,000 at ε = 2 (≈ 1000: DP-SGD),
	# ε = 8 (≈ 3300: DP-SGD) and ε = 16 (≈ 6000: DP-FC, whose clip and
	# steps stay its defaults). Cells above 16·D rows (n ≈ 6,000
	# and 30,000 for both encoders) choose as before (solvers'
	# TestChooseAuto, TestAutoFewRowsSGD).
	{
		echo "## Small data: the sample ridge and DP-SGD's clip and steps wherever rows are few (issue 41)"
		echo
		echo "\`bench/shift.sh fewrows\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto: the rule"
		echo "with at most 16·D training rows (solvers.AutoFewRows): the whitening's sample ridge at every n·μ, and DP-SGD with"
		echo "clip 0.5 and 100 steps (solvers.AutoFewRowsSGD). before: its choice on these cells at the last stop (dpsgd+whiten,"
		echo "the noise ridge, or dpsgd+whiten^sample below n·μ = 700, with DP-SGD's defaults: clip 1, 50 steps); dpsgd+whiten^sample:"
		echo "the ridge alone."
		go run ./bench/shift/run -sets "$sets" -n 600 -eps 8 -seeds "${SEEDS:-5}" -refs ls \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,dpsgd+whiten,dpsgd+whiten^sample -before dpsgd+whiten -goal 8=0.8
		go run ./bench/shift/run -sets "$sets" -n 600 -eps 3,4 -seeds "${SEEDS:-5}" -refs ls -configs auto,dpsgd+whiten^sample -before dpsgd+whiten^sample
		go run ./bench/shift/run -sets "$sets" -n 2000 -eps 2,8 -seeds "${SEEDS:-5}" -refs ls -configs auto,dpsgd+whiten,dpsgd+whiten^sample -before dpsgd+whiten
		go run ./bench/shift/run -sets "$sets" -n 2000 -eps 16 -seeds "${SEEDS:-5}" -refs ls -configs auto,dpfc+whiten -before dpfc+whiten
	} | tee bench/results/shift-fewrows.md.tmp
	publish shift-fewrows
	exit 0
fi
if [ "${1:-}" = publicfew ]; then
	# #41: with public features (the set's train rows 0–29999,
	# unlabelled) and at most 16·D training rows (solvers.AutoFewRows)
	# auto takes the private rule from n·μ = 60 on their whitening, with
	# the training rows' sample ridge: DPPL-Mean below 300, DP-SGD with
	# AutoFewRowsSGD to 4000; DP-FC from there keeps the noise ridge
	# (dpfc+whiten^sample@public beside it). before: its rule at the
	# last stop (DPPL-Mean without a transform below n·μ = 100, then
	# DP-SGD or DP-FC on their whitening with the noise ridge); auto:
	# without the public rows. Below n·μ = 60 their whitening is gated
	# on their own mean (exact, free: whitened only if ‖m‖² ≥ 0.4,
	# solvers.AutoGate), the ungated one beside it. n ≈ 600 at ε = 0.15,
	# 0.3 (n·μ ≈ 25, 50), 0.45, 1, 2, 4, 8; n ≈ 2,000 at
	# ε = 2, 8, 16. Digits has no public rows. Cells above 16·D rows
	# choose as before (solvers' TestChooseAuto).
	{
		echo "## Small data with public features: the private rule wherever rows are few (issue 41)"
		echo
		echo "\`bench/shift.sh publicfew\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto@public:"
		echo "\`fit --method auto --public\` with the set's public rows (train rows 0–29999, unlabelled), the rule with at most 16·D"
		echo "training rows: their whitening with the training rows' sample ridge (below n·μ = 60 only if their own mean has ‖m‖² ≥ 0.4),"
		echo "DPPL-Mean below n·μ = 300, DP-SGD (clip 0.5, 100 steps) to 4000, then DP-FC on the noise ridge. before: its rule at the last stop (dpplmean below n·μ = 100, then"
		echo "dpsgd+whiten@public or dpfc+whiten@public, the noise ridge). auto: without the public rows. The gap tables' best default"
		echo "is the best method with its defaults among those run here (dpplmean, in the first only); against every method's defaults"
		echo "see \"Small data with public features\" (shift-public.md)."
		go run ./bench/shift/run -sets "$psets" -n 600 -eps 0.15,0.3,0.45 -seeds "${SEEDS:-5}" -refs ls \
			-configs auto,auto@public,dpplmean,dpplmean+whiten^sample@public -auto auto@public -before dpplmean
		go run ./bench/shift/run -sets "$psets" -n 600 -eps 1,2,4,8 -seeds "${SEEDS:-5}" -refs ls \
			-configs auto,auto@public,dpsgd+whiten@public -auto auto@public -before dpsgd+whiten@public
		go run ./bench/shift/run -sets "$psets" -n 2000 -eps 2,8 -seeds "${SEEDS:-5}" -refs ls \
			-configs auto,auto@public,dpsgd+whiten@public -auto auto@public -before dpsgd+whiten@public
		go run ./bench/shift/run -sets "$psets" -n 2000 -eps 16 -seeds "${SEEDS:-5}" -refs ls \
			-configs auto,auto@public,dpfc+whiten@public,dpfc+whiten^sample@public -auto auto@public -before dpfc+whiten@public
	} | tee bench/results/shift-publicfew.md.tmp
	publish shift-publicfew
	exit 0
fi
if [ "${1:-}" = encoderbasis ]; then
	# #41: auto takes the basis the encoder's manifest names (recorded
	# by extract) without a flag, so auto@basis — fit --method auto
	# --transform-basis with the encoder's own public features, the same
	# classifier bit for bit (train's TestAutoTakesTheEncoderBasis) — is
	# what auto does for an encoder that ships one; auto: without it.
	# Every band where the basis changes auto's choice (n·μ < 100 at any
	# n, < 300 with at most 16·D rows): n ≈ 600 at ε = 0.15 … 2, n ≈ 2,000
	# at ε = 0.1 … 0.5, n ≈ 6,000 at ε = 0.03 … 0.1; at ε = 1 next to
	# every method with its defaults, for #41's goal.
	for e in fmnist-resnet fmnist-vit; do features "$e" public; done
	{
		echo "## Small data: the encoder's basis without a flag (issue 41)"
		echo
		echo "\`bench/shift.sh encoderbasis\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto@basis:"
		echo "\`fit --method auto\` on features whose encoder's manifest names its own public training features (Fashion-MNIST"
		echo "train rows 0–29999, bench/out/fmnist-ENCODER-public.arrow) as its basis, which is \`--transform-basis\` with them;"
		echo "auto: without a basis (before). The methods with their defaults (ε = 1) give the gap's baseline, non-private ls its top."
		go run ./bench/shift/run -sets "$sets" -n 600 -eps 1 -seeds "${SEEDS:-5}" -refs ls \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,auto@basis -auto auto@basis -before auto -goal 1=0.5
		go run ./bench/shift/run -sets "$sets" -n 600 -eps 0.15,0.3,0.45,0.75,1.5,2 -seeds "${SEEDS:-5}" -refs ls \
			-configs auto,auto@basis -auto auto@basis -before auto
		go run ./bench/shift/run -sets "$sets" -n 2000 -eps 0.1,0.2,0.3,0.5 -seeds "${SEEDS:-5}" -refs ls \
			-configs auto,auto@basis -auto auto@basis -before auto
		go run ./bench/shift/run -sets "$sets" -n 6000 -eps 0.03,0.05,0.1 -seeds "${SEEDS:-5}" -refs ls \
			-configs auto,auto@basis -auto auto@basis -before auto
	} | tee bench/results/shift-encoderbasis.md.tmp
	publish shift-encoderbasis
	exit 0
fi
if [ "${1:-}" = prior ]; then
	# #41, measured and not adopted: given a basis, DP-SGD's private
	# whitening in all D with the released second-moment matrix averaged
	# with the basis's (solvers.TransformSpec.Prior, post-processing,
	# free), where auto fits DP-SGD with at most 16·D rows — cand:
	# exactly auto's fit there plus the prior; auto: without it. The ten
	# shifts and in distribution, then the two held-out shifts
	# (holdout_sets). n ≈ 600 at ε = 3, 4, 8 (ε = 8 next to every method
	# with its defaults, for #41's 80% goal), n ≈ 2,000 at ε = 1, 2, 8.
	for e in fmnist-resnet fmnist-vit; do features "$e" public; done
	holdout_sets
	cand='dpsgd/clip=0.5/steps=100+whiten^sample@prior'
	{
		echo "## Small data: the encoder's basis as the prior of DP-SGD's whitening (issue 41, not adopted)"
		echo
		echo "\`bench/shift.sh prior\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. $cand"
		echo "(\`fit --method dpsgd --clip 0.5 --steps 100 --transform whiten --transform-ridge sample --transform-basis-prior\`"
		echo "with the encoder's own public training features, Fashion-MNIST train rows 0–29999, as the basis): what auto fits in"
		echo "these cells (DP-SGD, at most 16·D rows), its released second-moment matrix averaged with the basis's; auto: as it is."
		echo "The methods with their defaults (ε = 8) give the gap's baseline, non-private ls its top. Last, the two shifts no rule"
		echo "was derived from (pixel noise; half size in a corner)."
		for s in "$sets" "$hsets"; do
			go run ./bench/shift/run -sets "$s" -n 600 -eps 8 -seeds "${SEEDS:-5}" -refs ls \
				-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,"$cand" -auto "$cand" -before auto -goal 8=0.8
			go run ./bench/shift/run -sets "$s" -n 600 -eps 3,4 -seeds "${SEEDS:-5}" -refs ls \
				-configs auto,"$cand" -auto "$cand" -before auto
			go run ./bench/shift/run -sets "$s" -n 2000 -eps 1,2,8 -seeds "${SEEDS:-5}" -refs ls \
				-configs auto,"$cand" -auto "$cand" -before auto
		done
	} | tee bench/results/shift-prior.md.tmp
	publish shift-prior
	exit 0
fi
if [ "${1:-}" = lp ]; then
	# #41: auto fits DP-LP (dplp: softmax cross-entropy,
	# SGD with momentum, its own private centring; clip 0.4,
	# solvers.AutoLinearProbeParams) where it fitted DP-SGD, from n·μ =
	# 500 with at most 16·D rows (solvers.AutoLinearProbeFloor) or 700
	# with more (AutoSampleRidge) to 2500 (AutoLinearProbe). auto against
	# its earlier choice on each cell, same seeds: with few rows DP-SGD
	# with clip 0.5 and 100 steps on the sample ridge, with more DP-SGD's
	# defaults on the noise ridge. The ten shifts and in distribution,
	# then the two held-out shifts (holdout_sets). n ≈ 600 at ε = 8 (n·μ ≈
	# 1000, every method with its defaults, for #41's 80% goal), 3 and 4
	# (≈ 430: below the floor, auto unchanged; ≈ 555); n ≈ 2,000 at ε =
	# 0.75, 1, 2, 4, 6 (≈ 410, 535, 1000, 1850, 2620: above the cap);
	# n ≈ 6,000 at ε = 0.5 and 1 (≈ 850, 1610); n = 30,000 at ε = 0.1
	# (≈ 980, bench/fit.sh's cell). cand: DP-LP so set where auto does not
	# take it. With public features: lppublic.
	holdout_sets
	few='dpsgd/clip=0.5/steps=100+whiten^sample'
	cand='dplp/clip=0.4+whiten^sample'
	{
		echo "## Small data: DP-LP where auto fitted DP-SGD (issue 41)"
		echo
		echo "\`bench/shift.sh lp\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto: the rule"
		echo "of solvers.ChooseAuto now: on private data DP-LP (\`dplp\`: softmax cross-entropy, SGD with momentum, its own private"
		echo "centring) with clip 0.4 on the whitening, from n·μ = 500 with at most 16·D rows (700 with more) to 2500. before: its"
		echo "earlier choice, DP-SGD ($few with at most 16·D rows, dpsgd+whiten with more), same seeds. $cand: DP-LP"
		echo "where auto does not take it. Last, the two shifts no rule was derived from (pixel noise; half size in a corner)."
		for s in "$sets" "$hsets"; do
			go run ./bench/shift/run -sets "$s" -n 600 -eps 8 -seeds "${SEEDS:-5}" -refs ls \
				-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,"$few" -before "$few" -goal 8=0.8
			go run ./bench/shift/run -sets "$s" -n 600 -eps 3,4 -seeds "${SEEDS:-5}" -refs ls -configs auto,"$few","$cand" -before "$few"
			go run ./bench/shift/run -sets "$s" -n 2000 -eps 0.75,1,2,4,6 -seeds "${SEEDS:-5}" -refs ls -configs auto,"$few","$cand" -before "$few"
		done
		go run ./bench/shift/run -sets "$sets" -n 6000 -eps 0.5,1 -seeds "${SEEDS:-5}" -refs ls -configs auto,dpsgd+whiten -before dpsgd+whiten
		go run ./bench/shift/run -sets "$hsets" -n 6000 -eps 0.5,1 -seeds "${SEEDS:-5}" -refs ls -configs auto,dpsgd+whiten -before dpsgd+whiten
		go run ./bench/shift/run -sets fmnist-resnet,fmnist-vit,invert-fmnist-resnet,rot90-fmnist-vit -n 0 -eps 0.1 -seeds "${SEEDS:-5}" -refs ls -configs auto,dpsgd+whiten -before dpsgd+whiten
	} | tee bench/results/shift-lp.md.tmp
	publish shift-lp
	exit 0
fi
if [ "${1:-}" = classes ]; then
	# #41: with M < 10 classes auto's DPPL-Mean bands end at n·μ = 300·M/10
	# on private data (solvers.prototypesBelow: 60 for 2 classes, 150 for
	# 5), DP-SGD from there; with public features they keep ten's. The
	# twelve sets with their labels merged into M groups of neighbours
	# (⌊y·M/10⌋, bench/shift/classes), auto against its earlier
	# choice on each cell, same seeds: n ≈ 600 at ε = 1 and 1.5 (n·μ ≈ 160,
	# 230; for 2 classes also 0.75, ≈ 120), without and with the encoder's
	# basis (the whitening within its subspace before); n ≈ 6,000 at
	# ε = 0.1 (≈ 195). The two held-out shifts (holdout_sets) too.
	{
		echo "## Small data with fewer classes: DPPL-Mean's bands end at n·μ = 300·M/10 (issue 41)"
		echo
		echo "\`bench/shift.sh classes\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. The twelve sets with"
		echo "their ten labels merged into M groups of neighbours (label ⌊y·M/10⌋; idkM: in distribution). auto: the rule of"
		echo "solvers.ChooseAuto now, where DPPL-Mean's bands end at n·μ = 300·M/10 and DP-SGD follows (with clip 0.5 and 100 steps"
		echo "with at most 16·D rows); before: its earlier choice on each cell, same seeds (DPPL-Mean on the whitening with the sample"
		echo "ridge; with the encoder's basis, @basis, that whitening within the basis's top 32 directions). The held-out shifts"
		echo "(pixel noise; half size in a corner: noisekM, cornerkM) are merged and measured too."
		holdout_sets
		for k in 2 5; do
			ks=$(go run ./bench/shift/classes "$k" "$sets,$hsets")
			eps=1,1.5
			[ "$k" = 2 ] && eps=0.75,1,1.5
			go run ./bench/shift/run -sets "$ks" -n 600 -eps "$eps" -seeds "${SEEDS:-5}" -refs ls -goal '' \
				-configs auto,dpplmean+whiten^sample -before dpplmean+whiten^sample
			go run ./bench/shift/run -sets "$ks" -n 600 -eps "$eps" -seeds "${SEEDS:-5}" -refs ls -goal '' \
				-configs auto@basis,dpplmean+whiten:32^sample@subspace -auto auto@basis -before dpplmean+whiten:32^sample@subspace
			go run ./bench/shift/run -sets "$ks" -n 6000 -eps 0.1 -seeds "${SEEDS:-5}" -refs ls -goal '' \
				-configs auto,dpplmean+whiten^sample -before dpplmean+whiten^sample
		done
	} | tee bench/results/shift-classes.md.tmp
	publish shift-classes
	exit 0
fi
if [ "${1:-}" = lppublic ]; then
	# #41: auto's DP-LP band (lp above) with public features (the set's
	# train rows 0–29999, unlabelled: their whitening, free), against its
	# earlier choice on each cell, same seeds: DP-SGD with clip 0.5 and 100
	# steps on their whitening with the training rows' sample ridge (at most
	# 16·D rows), or with its defaults on their noise ridge (more). n ≈ 600
	# at ε = 4 and 8 (n·μ ≈ 555, 1000), n ≈ 2,000 at ε = 1 and 2 (≈ 535,
	# 1000), n ≈ 6,000 at ε = 0.5 and 1 (≈ 850, 1610).
	{
		echo "## Small data: DP-LP where auto fitted DP-SGD, with public features (issue 41)"
		echo
		echo "\`bench/shift.sh lppublic\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto@public: the"
		echo "rule of solvers.ChooseAuto now with the set's public features (train rows 0–29999, unlabelled) given: DP-LP with"
		echo "clip 0.4 on their whitening from n·μ = 500 with at most 16·D rows (700 with more) to 2500. before: its earlier choice"
		echo "on each cell, DP-SGD on the same whitening, same seeds."
		go run ./bench/shift/run -sets "$psets" -n 600 -eps 4,8 -seeds "${SEEDS:-5}" -refs ls \
			-configs auto@public,dpsgd/clip=0.5/steps=100+whiten^sample@public -auto auto@public -before dpsgd/clip=0.5/steps=100+whiten^sample@public
		go run ./bench/shift/run -sets "$psets" -n 2000 -eps 1,2 -seeds "${SEEDS:-5}" -refs ls \
			-configs auto@public,dpsgd/clip=0.5/steps=100+whiten^sample@public -auto auto@public -before dpsgd/clip=0.5/steps=100+whiten^sample@public
		go run ./bench/shift/run -sets "$psets" -n 6000 -eps 0.5,1 -seeds "${SEEDS:-5}" -refs ls \
			-configs auto@public,dpsgd+whiten@public -auto auto@public -before dpsgd+whiten@public
	} | tee bench/results/shift-lppublic.md.tmp
	publish shift-lppublic
	exit 0
fi
if [ "${1:-}" = holdout ]; then
	# #41: the few-rows rule (solvers.AutoFewRows, AutoFewRowsSGD) on two
	# shifts it was not derived from (bench/shift/make.py holdout: pixel
	# noise, the image at half size in a corner), both encoders: auto
	# against its earlier choice on each cell, same seeds, as in fewrows.
	holdout_sets
	{
		echo "## Small data: the few-rows rule on shifts it was not derived from (issue 41)"
		echo
		echo "\`bench/shift.sh holdout\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. Fashion-MNIST with"
		echo "Gaussian pixel noise (std 64) and at half size in a corner (bench/shift/make.py holdout), through both encoders; auto"
		echo "and before as in \"the sample ridge and DP-SGD's clip and steps wherever rows are few\"."
		go run ./bench/shift/run -sets "$hsets" -n 600 -eps 8 -seeds "${SEEDS:-5}" -refs ls \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,dpsgd+whiten -before dpsgd+whiten -goal 8=0.8
		go run ./bench/shift/run -sets "$hsets" -n 600 -eps 4 -seeds "${SEEDS:-5}" -refs ls -configs auto,dpsgd+whiten^sample -before dpsgd+whiten^sample
		go run ./bench/shift/run -sets "$hsets" -n 2000 -eps 2,8 -seeds "${SEEDS:-5}" -refs ls -configs auto,dpsgd+whiten -before dpsgd+whiten
	} | tee bench/results/shift-holdout.md.tmp
	publish shift-holdout
	exit 0
fi
if [ "${1:-}" = ridge ]; then
	# #41: auto's rule from the whitening's sample ridge (DPPL-Mean on
	# whitened features at n·μ 100–300, DP-SGD with the sample ridge at
	# 300–700) against the rule before it (dpsgd+whiten, the noise ridge;
	# dpplmean+pca:32@basis was auto with a basis at n·μ < 180), in one
	# run with the same seeds; every method with its defaults gives the
	# gap's baseline. n ≈ 600 at ε = 1, 2, 4 (n·μ ≈ 155, 300, 600) and
	# n ≈ 6,000 at ε = 0.1 (n·μ ≈ 195).
	{
		echo "## Small data: the whitening's sample ridge (issue 41)"
		echo
		echo "\`bench/shift.sh ridge\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto: the rule"
		echo "of solvers.ChooseAuto now; dpsgd+whiten: auto's rule before it on these cells (the noise ridge), in the same run;"
		echo "dpplmean+pca:32@basis: auto with \`--transform-basis\` before it at n·μ < 180 (the encoder's public features)."
		go run ./bench/shift/run -sets "$sets" -n 600 -eps 1,2,4 -seeds "${SEEDS:-5}" -refs ls \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,dpplmean+pca:32@basis,dpsgd+whiten,auto -before dpsgd+whiten
		go run ./bench/shift/run -sets "$sets" -n 6000 -eps 0.1 -seeds "${SEEDS:-5}" -refs ls \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,dpsgd+whiten,auto -before dpsgd+whiten
	} | tee bench/results/shift-ridge.md.tmp
	publish shift-ridge
	exit 0
fi
if [ "${1:-}" = gate ]; then
	# #41: from n·μ = 60 to 100 auto whitens only features whose released
	# mean is long (solvers.AutoGate), against its rule before (dpplmean,
	# no transform) and the ungated whitening, in one run with the same
	# seeds; every method with its defaults gives the gap's baseline.
	# n ≈ 600 at ε = 0.3, 0.45 and 0.6 (n·μ ≈ 50, 75 and 95), n ≈ 6,000 at
	# ε = 0.03 (n·μ ≈ 65).
	{
		echo "## Below n·μ = 100: a gated whitening (issue 41)"
		echo
		echo "\`bench/shift.sh gate\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto: the rule"
		echo "of solvers.ChooseAuto now (from n·μ = 60 to 100 DPPL-Mean, whitened only when the released mean has ‖m‖² ≥ 0.4; below"
		echo "60 no transform); dpplmean: auto's rule before it on cells below n·μ = 100 (no transform); dpplmean+whiten^sample: the"
		echo "whitening without the gate."
		go run ./bench/shift/run -sets "$sets" -n 600 -eps 0.3,0.45,0.6 -seeds "${SEEDS:-5}" -refs ls \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,dpplmean+whiten^sample,auto -before dpplmean
		go run ./bench/shift/run -sets "$sets" -n 6000 -eps 0.03 -seeds "${SEEDS:-5}" -refs ls \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,dpplmean+whiten^sample,auto -before dpplmean
	} | tee bench/results/shift-gate.md.tmp
	publish shift-gate
	exit 0
fi
# before_after NAME BEFORE BANDS TITLE DESCRIPTION N:EPS… builds the shift
# harness at commit BEFORE and at HEAD, runs both (auto@public, the same
# cells and seeds) at each N:EPS (EPS comma-separated), joins their rule
# tables into bench/results/NAME.md — every cell before and after, then
# the mean change by n and by band of n·μ (BANDS: the bands' upper
# bounds, space-separated) — and publishes it.
before_after() {
	local name=$1 before=$2 bands=$3 title=$4 desc=$5 wt w cell
	shift 5
	wt=$(mktemp -d)
	git worktree add -q --detach "$wt/before" "$before"
	(cd "$wt/before" && go build -o "$wt/run-before" ./bench/shift/run)
	git worktree remove --force "$wt/before"
	go build -o "$wt/run-after" ./bench/shift/run
	for w in before after; do
		for cell in "$@"; do
			"$wt/run-$w" -rule -sets "$psets" -n "${cell%%:*}" -eps "${cell#*:}" -seeds "${SEEDS:-5}" -refs ls -configs auto@public -auto auto@public >>"$wt/$w.md"
		done
	done
	{
		echo "## $title (issue 41)"
		echo
		echo "\`bench/shift.sh ${name#shift-}\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5, auto@public"
		echo "(\`fit --method auto --public\` with the set's train rows 0–29999, unlabelled) before (commit $before) and after: $desc"
		echo
		echo "| n·μ | features | n | ε | before | after | change (points) |"
		echo "|---|---|---|---|---|---|---|"
		# The rule tables' cell rows: | n·μ | features | n | ε | auto@public | best |.
		awk -F' [|] ' 'FNR == 1 { f++ } /^[|] [0-9]+ [|] [a-z]/ && NF >= 6 { k = $2 SUBSEP $3 SUBSEP $4; if (f == 1) b[k] = $5; else printf "| %s | %s | %s | %s | %s | %s | %+.2f |\n", substr($1, 3), $2, $3, $4, b[k], $5, 100 * ($5 - b[k]) }' "$wt/before.md" "$wt/after.md" |
			sort -t'|' -k4,4n -k2,2n -k3,3
		echo
		echo "By band: the cells' mean change and how many moved by more than 0.3 points either way."
		echo
		echo "| n | n·μ | cells | mean change | up | down |"
		echo "|---|---|---|---|---|---|"
		awk -F' [|] ' -v bands="$bands" 'BEGIN { nb = split(bands, ub, " ") }
			FNR == 1 { f++ } /^[|] [0-9]+ [|] [a-z]/ && NF >= 6 { k = $2 SUBSEP $3 SUBSEP $4; if (f == 1) { b[k] = $5; next }
			s = substr($1, 3) + 0; lo = 0; band = ""; for (i = 1; i <= nb; i++) { if (s < ub[i] + 0) { band = lo "–" ub[i]; break } lo = ub[i] } if (band == "") band = lo " and above"
			g = ($3 + 0 < 2000 ? "≈ 600" : "≈ 6,000") SUBSEP band; d = 100 * ($5 - b[k]); n[g]++; t[g] += d; if (d > 0.3) u[g]++; if (d < -0.3) l[g]++ }
			END { for (g in n) { split(g, p, SUBSEP); printf "| %s | %s | %d | %+.2f | %d | %d |\n", p[1], p[2], n[g], t[g] / n[g], u[g], l[g] } }' "$wt/before.md" "$wt/after.md" | sort
	} | tee "bench/results/$name.md.tmp"
	rm -r "$wt"
	publish "$name"
}
if [ "${1:-}" = refine ]; then
	# #41: with public features auto refines DPPL-Mean's released
	# prototypes on them below n·μ = 180 (solvers.AutoRefine: each becomes
	# the mean of the public rows nearest it, post-processing), and with
	# more than 16·D rows fits DPPL-Mean on their whitening from n·μ = 100
	# to 140 (solvers.AutoPublicPrototypes) instead of DP-SGD: n ≈ 600 at
	# ε = 0.3, 0.5, 1, 1.3 (n·μ ≈ 55, 85, 160, 205), n ≈ 6,000 at
	# ε = 0.03, 0.05, 0.0625, 0.075, 0.1 (≈ 65, 105, 125, 150, 195). Digits
	# has no public rows. (Since then the bounds moved: bench/shift.sh span.)
	before_after shift-refine "${BEFORE:-a1d6ba4}" "100 140 180" "Small data with public features: DPPL-Mean's prototypes refined on them" \
		"DPPL-Mean's prototypes refined on the public rows below n·μ = 180 (one step: each becomes the mean of the public rows nearest it), and with more than 16·D rows DPPL-Mean on their whitening from n·μ = 100 to 140 instead of DP-SGD." \
		600:0.3,0.5,1,1.3 6000:0.03,0.05,0.0625,0.075,0.1
	exit 0
fi
if [ "${1:-}" = span ]; then
	# #41: with public features auto's DPPL-Mean keeps the span of their
	# clusters on their whitening (solvers.AutoClusters: 24 where it
	# refines, below n·μ = 140, 32 above; TransformSpec.Clusters), and with
	# more than 16·D rows fits it on their sample-ridge whitening from
	# n·μ = 100 to 550 (solvers.AutoPublicPrototypes) instead of DP-SGD:
	# n ≈ 600 at ε = 0.5, 0.75, 1, 1.5, 2 (n·μ ≈ 85, 125, 160, 230, 300),
	# n ≈ 6,000 at ε = 0.05, 0.0625, 0.1, 0.2, 0.3 (≈ 105, 125, 195, 370,
	# 540). Before: BEFORE, default 491bef4.
	before_after shift-span "${BEFORE:-491bef4}" "140 300 600" "Small data with public features: DPPL-Mean within the span of their clusters" \
		"DPPL-Mean on the public whitening keeps the span of 24 k-means clusters of the public rows (refined, below n·μ = 140) or 32 (above), and with more than 16·D rows runs on their sample-ridge whitening from n·μ = 100 to 550 instead of DP-SGD (before: the noise ridge to 140, DP-SGD above); refine's bound 180 → 140." \
		600:0.5,0.75,1,1.5,2 6000:0.05,0.0625,0.1,0.2,0.3
	exit 0
fi
if [ "${1:-}" = ceiling ]; then
	# #41's targets (half the gap at n ≈ 600, ε = 1 and n ≈ 6,000,
	# ε = 0.1; 80% at n ≈ 600, ε = 8) against auto and the best
	# configuration measured; where auto is DPPL-Mean on the whitening,
	# auto with its noise removed (auto!): what the noise costs, against
	# what the target allows it to cost, and which release's noise that
	# is (auto!sums: the class sums exact, auto!transform: the
	# whitening's mean and matrix exact). At ε = 8 auto is DP-Adam, whose
	# steps are tuned to its noise, so no auto! there; the whitening's
	# other methods and ridges are measured instead.
	{
		echo "## Small data: how far the targets are (issue 41)"
		echo
		echo "\`bench/shift.sh ceiling\`, $(date -u +%Y-%m-%d), $(nproc) cores: n ≈ 600 (and n ≈ 6,000 at ε = 0.1), medians of ${SEEDS:-5} seeded runs, δ = 1e-5."
		echo "auto!: auto's fits at the same ε with every release's noise removed; auto!sums, auto!transform: only DPPL-Mean's class sums,"
		echo "only the whitening's mean and matrix exact (a bench noise source, accounting.Quiet). \`+whiten^sample\`: the whitening with the"
		echo "sample ridge."
		go run ./bench/shift/run -sets "$sets" -n 600 -eps 1 -seeds "${SEEDS:-5}" -refs ls \
			-configs 'dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,auto!,auto!sums,auto!transform'
		go run ./bench/shift/run -sets "$sets" -n 600 -eps 8 -seeds "${SEEDS:-5}" -refs ls \
			-configs 'dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,dpsgd+whiten^sample,dpfc+whiten^sample,dpplmean+whiten^sample,dpsgd/steps=200+whiten^sample'
		# n ≈ 6,000 at ε = 0.1 (n·μ ≈ 195, DPPL-Mean on the whitening like
		# n ≈ 600 at ε = 1): the issue's other half-gap target.
		go run ./bench/shift/run -sets "$sets" -n 6000 -eps 0.1 -seeds "${SEEDS:-5}" -refs ls -goal 0.1=0.5 \
			-configs 'dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,auto!,auto!sums,auto!transform'
	} | tee bench/results/shift-ceiling.md.tmp
	publish shift-ceiling
	exit 0
fi
# synth_links makes bench/out/synthbasis-resnet.arrow and -vit.arrow, links
# to the two encoders' synthetic bases (synth_basis), the @basis files of
# the modes that take them (-basis bench/out/synthbasis-%s.arrow).
synth_links() {
	for e in resnet vit; do
		ln -sfn "$(synth_basis "fmnist-$e")" "bench/out/synthbasis-$e.arrow"
	done
}
if [ "${1:-}" = synthbasis ]; then
	# #41: what extract records for an encoder whose manifest names no
	# basis — the features of 2,000 random-process images (package
	# synthbasis) — taken by auto as the encoder's basis (auto@basis),
	# against auto without it, same seeds, every method with its defaults
	# for the goal's columns: n ≈ 600 at ε = 0.3 to 2 (n·μ ≈ 50–330),
	# n ≈ 2,000 at ε = 0.1 and 0.3, the two held-out shifts beside.
	synth_links
	holdout_sets
	{
		echo "## Small data with the encoder's synthetic basis (issue 41)"
		echo
		echo "\`bench/shift.sh synthbasis\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto@basis: \`fit --method auto\`"
		echo "with the encoder's synthetic basis — the features of 2,000 random-process images (dead leaves and power-law spectra,"
		echo "the encoder's input size, seed 0: no data) that \`extract\` now records when the manifest names no basis; auto: without it"
		echo "(the rule before). Gap recovered: against the best method with its defaults and non-private ls."
		go run ./bench/shift/run -sets "$sets,$hsets" -n 600 -eps 0.3,0.5,0.75,1,1.5,2 -seeds "${SEEDS:-5}" -refs ls \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,auto@basis -auto auto@basis -before auto -goal 1=0.5 -basis bench/out/synthbasis-%s.arrow
		go run ./bench/shift/run -sets "$sets,$hsets" -n 2000 -eps 0.1,0.3 -seeds "${SEEDS:-5}" -refs ls \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,auto@basis -auto auto@basis -before auto -basis bench/out/synthbasis-%s.arrow
	} | tee bench/results/shift-synthbasis.md.tmp
	{
		echo
		echo "Mean change, auto@basis against auto (in points; the held-out shifts apart):"
		echo
		(cd bench/shift && /usr/bin/python3 delta.py ../results/shift-synthbasis.md.tmp auto auto@basis noise,corner)
	} | tee bench/results/shift-synthbasis.delta.tmp
	cat bench/results/shift-synthbasis.delta.tmp >>bench/results/shift-synthbasis.md.tmp
	rm bench/results/shift-synthbasis.delta.tmp
	publish shift-synthbasis
	exit 0
fi
if [ "${1:-}" = smalld ]; then
	# #41: the rule on a third encoder, smaller than the two it was
	# derived on: models/demo/fmnist-cnn (D = 64, trained on Fashion-MNIST
	# train rows 0–29999), the same shifts. auto (no basis) against
	# auto@basis and the whitening within the basis's top 32 directions
	# forced (dpplmean+whiten:32^sample@subspace), the basis once the
	# synthetic one extract records and once the encoder's training
	# features; n ≈ 600, ε = 0.3 to 1.5.
	cnn=models/demo/fmnist-cnn.onnx
	csets=
	for v in invert rot90 blur edge digits noise corner; do
		[ -f "$img/$v/t10k-labels-idx1-ubyte.gz" ] || /usr/bin/python3 bench/shift/make.py "$data" "$img" holdout
		shift_features "$cnn" fmnist-cnn "$v"
		csets="$csets,$v-fmnist-cnn"
	done
	[ -f bench/out/fmnist-cnn-private.arrow ] || bin/dpfeat extract --encoder "$cnn" --data "$data" --split train --offset 30000 --limit 30000 --out bench/out/fmnist-cnn-private.arrow --quiet
	[ -f bench/out/fmnist-cnn-test.arrow ] || bin/dpfeat extract --encoder "$cnn" --data "$data" --split test --out bench/out/fmnist-cnn-test.arrow --quiet
	[ -f bench/out/fmnist-cnn-public.arrow ] || bin/dpfeat extract --encoder "$cnn" --data "$data" --split train --limit 30000 --out bench/out/fmnist-cnn-public.arrow --quiet --synthetic-basis 0
	csets="fmnist-cnn$csets"
	ln -sfn "$(synth_basis "$cnn")" bench/out/synthbasis-cnn.arrow
	sub=dpplmean+whiten:32^sample@subspace
	wt=$(mktemp -d)
	for b in synthetic training; do
		pattern=bench/out/synthbasis-%s.arrow
		[ "$b" = training ] && pattern=bench/out/fmnist-%s-public.arrow
		go run ./bench/shift/run -sets "$csets" -n 600 -eps 0.3,0.5,1,1.5 -seeds "${SEEDS:-5}" -refs ls \
			-configs "auto,auto@basis,$sub" -basis "$pattern" -auto auto@basis -before auto -goal 1=0.5 >"$wt/$b.md"
	done
	{
		echo "## Small data on a smaller encoder: the basis's subspace and the feature dimension (issue 41)"
		echo
		echo "\`bench/shift.sh smalld\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5, n ≈ 600. The demo encoder"
		echo "(models/demo/fmnist-cnn, D = 64, trained on Fashion-MNIST train rows 0–29999) on the shift bench's images, a third encoder"
		echo "beside the two auto's rule was derived on. auto: no basis; auto@basis: the rule now with the basis (below n·μ = 100"
		echo "DPPL-Mean on its top 16 directions; from 100 to 300 the private whitening within its top 32, only from D = 128,"
		echo "AutoSubspaceMinDim); $sub: that whitening forced. Mean change against auto, in points:"
		for b in synthetic training; do
			echo
			echo "The $b basis$([ "$b" = synthetic ] && echo " (what extract records)" || echo " (the encoder's training features)"):"
			echo
			(cd bench/shift && /usr/bin/python3 delta.py "$wt/$b.md" auto auto@basis noise,corner)
			echo
			(cd bench/shift && /usr/bin/python3 delta.py "$wt/$b.md" auto "$sub" noise,corner)
		done
		echo
		echo "Per set, with the synthetic basis:"
		cat "$wt/synthetic.md"
	} | tee bench/results/shift-smalld.md.tmp
	rm -r "$wt"
	publish shift-smalld
	exit 0
fi
if [ "${1:-}" = goal ]; then
	# #41's acceptance: auto and auto@public at BEFORE (default ced15da,
	# the commit before the issue's first) and now, same seeds and rows,
	# against the targets (half the gap to ls at n ≈ 600, ε = 1 and
	# n ≈ 6,000, ε = 0.1; 80% at n ≈ 600, ε = 8), the best default
	# method and ls measured now; and every other n ≥ 6,000 cell of the
	# shift bench (ε = 0.2, 1, 8 at n ≈ 6,000; ε = 0.1, 1, 8 at 30,000),
	# where no cell may lose more than 0.3 points.
	# auto after is the command on features extract makes now: with the
	# encoder's synthetic basis (synth_links), read as auto. The before
	# runs are kept in bench/out (the same commit, seeds and rows give the
	# same figures).
	before=${BEFORE:-ced15da}
	synth_links
	wt=$(mktemp -d)
	kept="bench/out/goal-before-$(git rev-parse --short "$before")-s${SEEDS:-5}.md"
	if [ ! -f "$kept" ]; then
		git worktree add -q --detach "$wt/before" "$before"
		(cd "$wt/before" && go build -o "$wt/run-before" ./bench/shift/run)
		git worktree remove --force "$wt/before"
		for cell in 600:1,8 6000:0.1 6000:0.2,1,8 0:0.1,1,8; do
			"$wt/run-before" -sets "$sets" -n "${cell%%:*}" -eps "${cell#*:}" -seeds "${SEEDS:-5}" -refs "" -configs auto,auto@public >>"$wt/before.md"
		done
		mv "$wt/before.md" "$kept"
	fi
	go build -o "$wt/run-after" ./bench/shift/run
	for cell in 600:1,8 6000:0.1; do
		"$wt/run-after" -sets "$sets" -n "${cell%%:*}" -eps "${cell#*:}" -seeds "${SEEDS:-5}" -refs ls -basis bench/out/synthbasis-%s.arrow \
			-configs dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto@basis,auto@public >>"$wt/after.md"
	done
	for cell in 6000:0.2,1,8 0:0.1,1,8; do
		"$wt/run-after" -sets "$sets" -n "${cell%%:*}" -eps "${cell#*:}" -seeds "${SEEDS:-5}" -refs "" -basis bench/out/synthbasis-%s.arrow \
			-configs auto@basis,auto@public >>"$wt/after.md"
	done
	sed -i 's/^| auto@basis |/| auto |/' "$wt/after.md"
	{
		echo "## Small data: issue 41's goal, before and after"
		echo
		echo "\`bench/shift.sh goal\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5, the same seeds and rows"
		echo "before (commit $before, before the issue's work) and after ($(git rev-parse --short HEAD)). auto: \`fit --method auto\` (after: on"
		echo "features as extract now writes them, which record the encoder's synthetic basis, bench/results/shift-synthbasis.md);"
		echo "auto@public: with the set's public rows (train rows 0–29999, unlabelled; digits has none). Target: the best of the"
		echo "methods with their defaults (measured after) + the goal's share of the gap to non-private ls. The issue's goal is"
		echo "met in a shifted cell when auto reaches its target; auto@public is the same command given public features."
		echo
		/usr/bin/python3 bench/shift/goal.py "$kept" "$wt/after.md"
	} | tee bench/results/shift-goal.md.tmp
	rm -r "$wt"
	publish shift-goal
	exit 0
fi
if [ "${1:-}" = chance ]; then
	# #41: below n·μ = 25·√(M/10) auto says its fit will likely do little
	# better than chance (solvers.AutoNearChance): auto (with the encoder's
	# synthetic basis, as extract writes features now) on the twelve sets at
	# n ≈ 600 and the lowest ε, with ten classes, their labels merged into 5
	# and 2 groups (bench/shift/classes), and with public features.
	synth_links
	{
		echo "## Small data: auto near chance (issue 41)"
		echo
		echo "\`bench/shift.sh chance\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5, n ≈ 600. auto on"
		echo "features as extract writes them (the encoder's synthetic basis); M: the classes (the ten labels merged into M groups of"
		echo "neighbours, ⌊y·M/10⌋); auto@public: with the sets' public rows (digits has none). Mean accuracy over the sets (range), by ε"
		echo "and the cells' n·μ; chance is 1/M. solvers.AutoNearChance: auto notes the fit will likely do little better than chance"
		echo "below n·μ = 25·√(M/10) without public features."
		echo
		echo "| M | configuration | ε | n·μ | mean | range | sets |"
		echo "|---|---|---|---|---|---|---|"
		for m in 10 5 2; do
			ms=$sets eps=0.05,0.1,0.13,0.16,0.2,0.3
			[ "$m" = 10 ] || ms=$(go run ./bench/shift/classes "$m" "$sets")
			[ "$m" = 5 ] && eps=0.03,0.05,0.08,0.1,0.13
			[ "$m" = 2 ] && eps=0.02,0.03,0.05,0.1
			go run ./bench/shift/run -rule -sets "$ms" -n 600 -eps "$eps" -seeds "${SEEDS:-5}" -refs "" -configs auto@basis \
				-basis bench/out/synthbasis-%s.arrow | sed "s/^/M=$m /"
		done
		go run ./bench/shift/run -rule -sets "$psets" -n 600 -eps 0.05,0.1,0.13 -seeds "${SEEDS:-5}" -refs "" -configs auto@public | sed "s/^/M=10 /"
	} | awk -F'|' '
		!/^M=/ { print; next }
		NF != 8 || $2 !~ /^ *[0-9]+ *$/ { next } # the rule table rows only: | n·μ | set | n | ε | accuracy | configuration |
		{ split($1, h, /[= ]/); c = $7; gsub(/ /, "", c); k = h[2] "|" c "|" ($5 + 0); n[k]++; s[k] += $6; r = $2 + 0
		  if (!(k in lo)) { lo[k] = $6; slo[k] = r; order[++o] = k }
		  if ($6 < lo[k]) lo[k] = $6; if ($6 > hi[k]) hi[k] = $6; if (r < slo[k]) slo[k] = r; if (r > shi[k]) shi[k] = r }
		END { for (i = 1; i <= o; i++) { k = order[i]; split(k, f, "|")
			printf "| %s | %s | %s | %d–%d | %.3f | %.3f–%.3f | %d |\n", f[1], (f[2] == "auto@basis" ? "auto" : f[2]), f[3], slo[k], shi[k], s[k] / n[k], lo[k], hi[k], n[k] } }' |
		tee bench/results/shift-chance.md.tmp
	publish shift-chance
	exit 0
fi
if [ "${1:-}" = public ]; then
	# #41: auto with public features (the set's train rows 0–29999,
	# unlabelled) against a candidate rule for it at n·μ 100–300: DPPL-Mean
	# on their whitening with the sample ridge of the training rows (DP-SGD
	# with it to 700), in one run with the same seeds; auto without them
	# beside it. n ≈ 600 at ε = 1, 2, 4 (n·μ ≈ 155, 300, 600), n ≈ 6,000
	# at ε = 0.1 (n·μ ≈ 195). Digits has no public rows.
	cfg=dpls,dpfc,dpnewton,dpsgd,dplp,dpplmean,auto,auto@public,dpplmean+whiten^sample@public,dpsgd+whiten^sample@public
	{
		echo "## Small data with public features (issue 41)"
		echo
		echo "\`bench/shift.sh public\`, $(date -u +%Y-%m-%d), $(nproc) cores: medians of ${SEEDS:-5} seeded runs, δ = 1e-5. auto@public:"
		echo "\`fit --method auto --public\` with the set's public rows (train rows 0–29999, unlabelled); the candidates: its"
		echo "whitening with the training rows' sample ridge under DPPL-Mean and DP-SGD; auto: without the public rows."
		go run ./bench/shift/run -sets "$psets" -n 600 -eps 1,2,4 -seeds "${SEEDS:-5}" -refs ls \
			-configs "$cfg" -auto dpplmean+whiten^sample@public -before auto@public
		go run ./bench/shift/run -sets "$psets" -n 6000 -eps 0.1 -seeds "${SEEDS:-5}" -refs ls \
			-configs "$cfg" -auto dpplmean+whiten^sample@public -before auto@public
	} | tee bench/results/shift-public.md.tmp
	publish shift-public
	exit 0
fi
if [ "${1:-}" = rule ]; then
	# auto's rule: the candidate configurations over every table, by n·μ.
	{
		echo "## auto's rule (issue 18)"
		echo
		echo "\`bench/shift.sh rule\`, $(date -u +%Y-%m-%d), $(nproc) cores: the feature sets, sizes and ε of the shifted-feature"
		echo "benchmark, one seeded run per cell, the candidate configurations of \`--method auto\` by n·μ (μ: the target's GDP"
		echo "parameter at δ = 1e-5). solvers.ChooseAuto: dpplmean (no transform) below n·μ = 100, where nothing here beats chance,"
		echo "dpsgd+whiten below n·μ = 4000, dpfc+whiten from there."
		go run ./bench/shift/run -rule -sets "$sets" -n 600,6000,0 -eps 0.1,1,8 -seeds 1 -refs "" \
			-configs dpsgd+center,dpsgd+whiten,dpfc+center,dpfc+whiten,dpls+whiten
	} | tee bench/results/shift-rule.md.tmp
	publish shift-rule
	exit 0
fi
{
	echo "## Shifted features (issue 18)"
	echo
	echo "\`bench/shift.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores. Images unlike the encoders' training data (bench/shift/make.py):"
	echo "Fashion-MNIST inverted (255 − x), rotated 90°, blurred (Gaussian, σ = 1.5 px), edge-filtered (Sobel magnitude), and"
	echo "scikit-learn's 8×8 digits upscaled to 28×28 (1,200 train / 597 test rows), through both shared encoders; fmnist-* are"
	echo "the in-distribution features. Training: the private half (train rows 30000–59999; a per-row subsample for smaller n),"
	echo "test: the test set, public: train rows 0–29999 without labels. Median test accuracy over ${SEEDS:-3} seeded runs, δ = 1e-5,"
	echo "default hyperparameters; auto@public learns its transform from the public file. Non-private references on the same rows."
	go run ./bench/shift/run -sets "$sets" -n 600,6000,0 -eps 0.1,1,8 -seeds "${SEEDS:-3}" "$@"
} | tee bench/results/shift.md.tmp
publish shift
