"""Prints bench/randp.sh's table from its rows (finetune's --json reports)."""
import glob
import json
import os
import statistics
import sys

b = sys.argv[1]
rows = {}
for path in glob.glob(f"{b}/rows/*.json"):
    cfg, eps, run = os.path.basename(path)[:-5].split("-")
    rows.setdefault((cfg, float(eps)), []).append(json.load(open(path)))
phase1 = json.load(open(f"{b}/phase1.json"))
synth_s, pre_s = open(f"{b}/phase1.times").read().split()
names = {"a": "(a) Phase III only, random init (cold start)", "b": "(b) Phase I + II + III", "c": "(c) Phase I + II",
         "d": "(a′) as (a), 3000 steps of 1024: (b)'s compute"}
print("## DP-RandP end to end, no public data (issue 23)")
print()
print(f"`bench/randp.sh`. A small CNN (bench/finetune's: two strided tanh convolutions and a linear head, 7,018")
print("parameters) at a seeded random initialisation; no public data anywhere (input normalisation 0.5/0.5).")
c = phase1["config"]
print(f"Phase I: `dpfeat synth` made {phase1['images']} images of random processes (dead leaves and power-law")
print(f"spectra, 28×28 grey; contact sheet below) in {synth_s} s; `dpfeat pretrain` trained the feature extractor")
print(f"(the 576-wide conv output) on them for {c['steps']} Adam steps of {c['batch']} images (two views each,")
print(f"augment {c['augment']}, η = {c['lr']}) in {pre_s} s, final loss {phase1['final_loss']['loss']:.3f} (alignment")
print(f"{phase1['final_loss']['align']:.3f}, uniformity {phase1['final_loss']['uniform']:.3f}). Private phases on Fashion-MNIST's")
print("private half (30,000 images), δ = 1e-5: Phase II 100 full-batch steps of the head (η = 2), Phase III 500")
print("Poisson-sampled steps of everything (expected batch 256, η = 0.5), clip 1, momentum 0.9; (b) splits ε by the")
print("paper's rule, (a) and (c) give all of it to their one phase. Compute per run: (a) 500 × 256 ≈ 0.13 M")
print("example gradients, (b) 100 × 30,000 + 0.13 M ≈ 3.1 M, (c) 3.0 M, plus Phase I once for (b) and (c).")
n = len(rows.get(("a", 1.0), []))
print(f"Test accuracy on the 10,000 test images, median of {n} runs [min, max]; seconds: median wall time of a run.")
print()
print("| ε | configuration | test accuracy | s per run | Phase II s/step | Phase III s/step |")
print("|---|---|---|---|---|---|")
for eps in sorted({k[1] for k in rows}):
    for cfg in "adbc":
        rs = rows.get((cfg, eps))
        if not rs:
            continue
        acc = [r["test_accuracy"] for r in rs]
        secs = statistics.median(r["seconds"] for r in rs)
        s2 = statistics.median(r.get("step_seconds", [0, 0])[0] for r in rs)
        s3 = statistics.median(r.get("step_seconds", [0, 0])[1] for r in rs)
        cell = lambda v: f"{v:.3f}" if v > 0 else "–"
        print(f"| {eps:g} | {names[cfg]} | {statistics.median(acc):.4f} [{min(acc):.3f}, {max(acc):.3f}] | {secs:.0f} | {cell(s2)} | {cell(s3)} |")
print()
print("Anchors (Tramèr and Boneh, ICLR 2021, Fashion-MNIST, ε = 3, the full 60,000 training images): end-to-end")
print("CNN 86.0%, ScatterNet + linear 89.7%.")
print()
print("Reading (first run, 2026-11-23): the issue's goal is not reached. At ε = 1, Phase I + II + III (b) is 1.8 points")
print("*below* the cold start (a) (0.762 against 0.780), not 5 above; Phase I + II (c) is 3.2 points above it (0.812). At")
print("ε = 3 every configuration is within 1 point of 0.81 and none nears the 86.0% anchor. Phase III does not pay after")
print("Phase I here, as it did not after in-distribution pretraining (bench/finetune.sh): splitting ε leaves Phase II's")
print("head noisier and Phase III's 500 noisy steps move the whole net away from a prior they cannot improve at this")
print("noise. Phase I does help the linear probe: in a pilot (one run each, 20,000 synthetic images) Phase II alone at")
print("ε = 1 scored 0.793 on the random initialisation and 0.813 after Phase I. Given (b)'s compute, the cold start (a′)")
print("reaches 0.863 at ε = 8 but falls to 0.710 at ε = 1 (six times the steps: noise multiplier 7.6 against 1.2, so the")
print("noise on each step's mean gradient, σ/B, is 1.6 times (a)'s). The paper's gains")
print("come from a WRN-16-4 pretrained on StyleGAN-oriented images on GPUs; this 7,018-parameter CNN, its 576-wide")
print("features and 1,500 steps of Phase I on 2 cores are far from that, and the prior they learn is little better than")
print("a random convolution's.")
print()
print("![contact sheet of the Phase I images](results/randp-contact.png)")
