#!/usr/bin/env bash
# Extraction benchmark and check on the shared encoders (../shared/encoders)
# and Fashion-MNIST's test set, and on a ViT-B/16-sized encoder (224×224,
# D = 768) exported from torchvision's definition with random weights by
# models/export_encoder.py, so that the pipeline's overhead is measured at
# the size users run (256 images: it takes ~0.1 s an image on 2 cores).
# Writes bench/results/extract.json and extract.md.
# Needs: make setup; for the PyTorch-tensor check and the ViT-B/16 export,
# Debian's python3-torch and python3-torchvision.
set -euo pipefail
cd "$(dirname "$0")/.."
enc="${ENCODERS:-../shared/encoders}"
[ -d "$enc" ] || { echo "bench/extract.sh: no $enc (the shared encoders); set ENCODERS" >&2; exit 1; }
export ONNXRUNTIME_LIB="${ONNXRUNTIME_LIB:-$(scripts/setup.sh)}"
mkdir -p bench/results
tensors=""
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
	tensors="$(mktemp --suffix=.f32)"
	/usr/bin/python3 bench/extract/torch_tensors.py 2000 "$tensors" >&2
fi
out=bench/results/extract.json
echo "[" >"$out.tmp"
first=1
for m in "$enc"/fmnist-resnet.onnx "$enc"/fmnist-vit.onnx; do
	[ $first = 1 ] || echo "," >>"$out.tmp"
	first=0
	go run ./bench/extract -model "$m" ${tensors:+-tensors "$tensors"} >>"$out.tmp"
done
big="${BIG_ENCODER:-bench/out/encoders/vit_b_16-random.onnx}"
if [ ! -f "$big" ] && /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
	mkdir -p "$(dirname "$big")"
	/usr/bin/python3 models/export_encoder.py torchvision:vit_b_16 --no-weights -o "$big" >&2
fi
if [ -f "$big" ]; then
	echo "," >>"$out.tmp"
	go run ./bench/extract -model "$big" -limit 256 -batch 32 -reps 3 >>"$out.tmp"
fi
echo "]" >>"$out.tmp"
mv "$out.tmp" "$out"
[ -z "$tensors" ] || rm -f "$tensors"
/usr/bin/python3 - "$out" >bench/results/extract.md <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
print("## Extraction: the batch pipeline against bare ONNX Runtime Run")
print()
print("`bench/extract.sh`: images/s of `dpfeat extract`'s pipeline end to end (read, decode, preprocess, encode,")
print("write the feature file) against bare `Run` calls on the same images preprocessed beforehand, same batch")
print("and threads; the two alternate, ratio of the bests and median of each pipeline run over the bare run after it;")
print(f"ONNX Runtime {rows[0]['onnxruntime']}, {rows[0]['cpus']} cores.")
print()
print("| encoder | images | batch | pipeline img/s | bare Run img/s | ratio (target ≥ 0.95) | median pair ratio | max abs diff vs PyTorch tensors |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    diff = f"{r['max_abs_diff_vs_torch_tensors']:.1e} ({r['tensors_checked']} images)" if r.get("tensors_checked") else "-"
    print(f"| {r['model']} | {r['images']} | {r['batch']} | {r['end_to_end_images_per_second']:.1f} | {r['bare_run_images_per_second']:.1f} | {r['ratio']:.3f} | {r['median_pair_ratio']:.3f} | {diff} |")
PY
. bench/lib.sh
assemble
cat bench/results/extract.md
