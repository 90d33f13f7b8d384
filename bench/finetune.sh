#!/usr/bin/env bash
# Issue 9's benchmark: DP-RandP's private phases on Fashion-MNIST with a
# small CNN pretrained without privacy on the public half (train rows
# 0-29999; bench/finetune/pretrain.py, standing in for Phase I) and exported
# as a training graph; fine-tuned on the private half (rows 30000-59999),
# Phase II only (--phase2-share 1) against Phase II + III, at ε ∈ {1, 8},
# δ = 1e-5; test accuracy on the 10,000 test images and wall time. The
# shared fmnist-resnet encoder ships as ONNX only (no PyTorch definition to
# export a training graph from), and CPU time forbids a ResNet anyway.
# Writes bench/results/finetune.md and rebuilds RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
b=bench/out/finetune
[ -f "$b/cnn-train.onnx" ] || /usr/bin/python3 bench/finetune/pretrain.py "$b" 2>/dev/null
data=/usr/share/datasets/fashion-mnist
run() { # EPS SHARE-FLAG…
	local eps=$1
	shift
	bin/dpfeat finetune --graph "$b/cnn-train.onnx" --params "$b/cnn-init.safetensors" --manifest "$b/cnn.json" \
		--data "$data" --offset 30000 --limit 30000 --head 5.weight,5.bias --epsilon "$eps" --delta 1e-5 \
		--phase2-steps 100 --phase3-steps 500 --batch 256 --lr 0.5 --test "$data" --out "$b/trained.safetensors" --force --json "$@" 2>/dev/null
}
out=bench/results/finetune.md
{
	echo "## Fine-tuning: DP-RandP Phase II only vs Phase II + III"
	echo
	echo "\`bench/finetune.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores, ONNX Runtime on the CPU. A small CNN (two strided tanh"
	echo "convolutions and a linear head, 7,018 parameters) pretrained without privacy on Fashion-MNIST's public half, its head"
	echo "reset to zero; \`dpfeat finetune\` on the private half (30,000 images), δ = 1e-5. Phase II: 100 full-batch steps of"
	echo "the head (η = 2); Phase III: 500 Poisson-sampled steps of everything (expected batch 256, η = 0.5); clip 1,"
	echo "momentum 0.9; one run each (secure noise). Test accuracy on the 10,000 test images."
	echo
	echo "| ε | phases | Phase II share of ε | noise multipliers (II / III) | test accuracy | wall s |"
	echo "|---|---|---|---|---|---|"
} >"$out"
for eps in 1 8; do
	for mode in ii iii; do
		if [ "$mode" = ii ]; then
			j=$(run "$eps" --phase2-share 1)
			label="II only"
		else
			j=$(run "$eps")
			label="II + III"
		fi
		echo "$j" | /usr/bin/python3 -c "
import json, sys
r = json.load(sys.stdin)
p2, p3 = r['phase2'], r['phase3']
sig = f\"{p2['noise_multiplier']:.3g} / {p3['noise_multiplier']:.3g}\" if p3['steps'] else f\"{p2['noise_multiplier']:.3g} / –\"
print(f\"| $eps | $label | {r['phase2_share']:.2f} | {sig} | {r['test_accuracy']:.4f} | {r['seconds']:.0f} |\")" >>"$out"
		tail -1 "$out" >&2
	done
done
assemble
cat "$out"
