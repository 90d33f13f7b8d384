#!/usr/bin/env bash
# The extraction pipeline at the engine's speed (issue 38): `dpfeat extract` over N JPEGs of
# 256×256 (the GPU bench's images) with
#   - a model that does nothing (the pipeline's own ceiling: read, decode, resize, crop,
#     normalise, convert, copy, write), float32 and float16 inputs, workers 1, 2, … up to the
#     cores: images/s, images/s per worker, and the per-stage split from a CPU profile;
#   - ViT-B/16 (random weights; float32, and float16 where a GPU exports it) against bare
#     ONNX Runtime Run on the same device and batch (bench/extract's bare loop);
#   - PyTorch's DataLoader pipeline (bf16 autocast on a GPU, float32 on the CPU) as the peer,
#     when torch and timm or torchvision are present.
# DEVICE=cpu (default) here; DEVICE=cuda on a GPU machine (../shared/gpu/README.md puts dpfeat
# and ONNX Runtime's CUDA provider there; scripts/setup-gpu.sh does on a machine with network).
# Writes bench/results/pipeline.md (the machine named) and reassembles bench/RESULTS.md.
#   N=512 bench/pipeline.sh        VIT=0 skips the ViT-B/16 rows (slow on a CPU)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-512}"; DEVICE="${DEVICE:-cpu}"; VIT="${VIT:-1}"
export ONNXRUNTIME_LIB="${ONNXRUNTIME_LIB:-$(scripts/setup.sh)}"
. bench/lib.sh
py=/usr/bin/python3; command -v "$py" >/dev/null || py=python3
w="bench/out/pipeline"; mkdir -p "$w"
cores="$(nproc)"
machine="$(lscpu 2>/dev/null | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}'), $cores cores"
if [ "$DEVICE" != cpu ] && command -v nvidia-smi >/dev/null; then machine="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $machine"; fi

# The images and the models that do nothing (a mean over the pixels; python3-onnx writes them).
"$py" - "$N" "$w" <<'PY'
import os, sys, numpy as np
from PIL import Image
n, w = int(sys.argv[1]), sys.argv[2]
d = os.path.join(w, "imgs")
if len([f for r, _, fs in os.walk(d) for f in fs]) != n:
    for i in range(n):
        r = np.random.default_rng(i)
        y, x = np.mgrid[0:256, 0:256] / 256.0
        img = np.stack([np.sin(x * r.uniform(1, 20) + r.uniform(0, 6)), np.cos(y * r.uniform(1, 20)), x * y], -1)
        img = ((img - img.min()) / (np.ptp(img) + 1e-9) * 200 + r.integers(0, 55, (256, 256, 3))).astype(np.uint8)
        os.makedirs(os.path.join(d, "c%d" % (i % 10)), exist_ok=True)
        Image.fromarray(img).save(os.path.join(d, "c%d" % (i % 10), "%05d.jpg" % i), quality=90)
PY
if [ ! -f "$w/null16.json" ]; then
	"$py" - "$w" <<'PY'
import hashlib, json, sys
from onnx import TensorProto, helper, save
w = sys.argv[1]
for name, dt in (("null", TensorProto.FLOAT), ("null16", TensorProto.FLOAT16)):
    nodes = [helper.make_node("Cast", ["pixel_values"], ["x"], to=TensorProto.FLOAT),
             helper.make_node("ReduceMean", ["x"], ["features"], axes=[2, 3], keepdims=0)]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("pixel_values", dt, ["batch", 3, 224, 224])],
                          [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", 3])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{w}/{name}.onnx")
    m = {"name": name, "file": f"{name}.onnx", "sha256": hashlib.sha256(open(f"{w}/{name}.onnx", "rb").read()).hexdigest(),
         "input": {"layout": "NCHW", "channels": 3, "height": 224, "width": 224, "resize": "bilinear", "crop": "center", "resize_size": 256,
                   "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225], "dtype": "float32" if name == "null" else "float16"},
         "output": {"dim": 3, "pool": "none"}}
    json.dump(m, open(f"{w}/{name}.json", "w"), indent=2)
PY
fi
rate() { "$py" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["images_per_second"])' "$1"; }
rows=()
for dt in null null16; do
	base=""
	for k in $(seq 1 "$cores"); do
		best=0
		for rep in 1 2 3; do
			bin/dpfeat extract --encoder "$w/$dt.onnx" --manifest "$w/$dt.json" --data "$w/imgs" --device "$DEVICE" --encoder-batch 64 --workers "$k" \
				--quiet --json --force --out "$w/n.arrow" >"$w/n.json" 2>/dev/null
			r="$(rate "$w/n.json")"; best="$("$py" -c "print(max($best, $r))")"
		done
		[ -n "$base" ] || base="$best"
		rows+=("| model that does nothing, $([ $dt = null ] && echo float32 || echo float16) | $k | $best | $("$py" -c "print('%.1f' % ($best / $k))") | $("$py" -c "print('%.2f' % ($best / $base / $k))") |")
	done
done
split="$(go test -run XXX -bench 'PipelineNullModel/float32/workers=1' -benchtime 2x -cpuprofile "$w/cpu.prof" -o "$w/encode.test" ./encode >/dev/null 2>&1 &&
	go tool pprof -top -nodecount=200 "$w/encode.test" "$w/cpu.prof" 2>/dev/null | "$py" -c '
import re, sys
cum = {}
for line in sys.stdin:
    m = re.match(r"\s*\S+\s+\S+\s+\S+\s+(\S+)s\s+\S+\s+(\S+)$", line)
    if m: cum[m.group(2)] = float(m.group(1))
total = cum.get("github.com/dpfeat/dpfeat/encode.Extract", 0) + sum(v for k, v in cum.items() if k.startswith("github.com/dpfeat/dpfeat/encode.Extract.func")) or 1
total = max(v for k, v in cum.items() if k.startswith("github.com/dpfeat/dpfeat/encode.Extract")) or 1
stages = [("JPEG decode (image/jpeg)", "image.Decode"), ("colour conversion to RGB", "github.com/dpfeat/dpfeat/features.rgbFromYCbCr"),
          ("resize, crop, normalise", "github.com/dpfeat/dpfeat/encode.(*Preprocessor).Apply")]
print("; ".join("%s %.0f%%" % (n, 100 * cum.get(k, 0) / total) for n, k in stages))')"
vit=()
if [ "$VIT" = 1 ]; then
	big="bench/out/encoders/vit_b_16-random.onnx"
	if [ ! -f "$big" ] && "$py" -c "import torch, torchvision" 2>/dev/null; then
		mkdir -p "$(dirname "$big")"; "$py" models/export_encoder.py torchvision:vit_b_16 --no-weights -o "$big" >&2
	fi
	if [ -f "$big" ]; then
		lim=$(( N < 128 ? N : 128 ))
		j="$(go run ./bench/extract -model "$big" -data "$w/imgs" -limit "$lim" -batch 32 -reps 2 -device "$DEVICE" -split "")"
		vit+=("$("$py" -c 'import json,sys; r=json.loads(sys.argv[1]); print("| ViT-B/16 float32 | %d | %.1f | %.1f | %.3f |" % (r["images"], r["end_to_end_images_per_second"], r["bare_run_images_per_second"], r["ratio"]))' "$j")")
	fi
fi
peer=""
if "$py" -c "import torch, torchvision" 2>/dev/null; then
	peer="$("$py" - "$w/imgs" "$DEVICE" "$cores" <<'PY' 2>/dev/null || true
import sys, time, torch, torch.nn as nn, torchvision.transforms as T, torchvision.datasets as dsets
d, dev, cores = sys.argv[1], sys.argv[2], int(sys.argv[3])
tf = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
dl = torch.utils.data.DataLoader(dsets.ImageFolder(d, tf), batch_size=64, num_workers=cores, pin_memory=dev != "cpu")
best = 0
for rep in range(2):
    t, k = time.time(), 0
    for xb, _ in dl:
        xb.to(dev if dev != "cpu" else "cpu").mean(dim=(2, 3)).cpu(); k += len(xb)
    best = max(best, k / (time.time() - t))
print("%.1f" % best)
PY
)"
fi
{
	echo "## Extraction pipeline per core (issue 38)"
	echo
	echo "\`bench/pipeline.sh\` (N = $N JPEGs of 256×256 → 224×224, batch 64; best of 3; $machine; device $DEVICE; ONNX Runtime \`${ONNXRUNTIME_LIB#"$PWD"/}\`)."
	echo "The per-worker column is what one core of the pipeline does; scaling is images/s over workers × the 1-worker rate (goal ≥ 0.8)."
	echo
	echo "| what | workers | images/s | images/s per worker | scaling |"
	echo "|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Where one worker's time goes (CPU profile of BenchmarkPipelineNullModel, float32): $split."
	if [ -z "$peer" ]; then
		echo
		echo "PyTorch and torchvision are not installed on this machine: the DataLoader peer row (and the ViT-B/16 export) are absent."
	else
		echo
		echo "Peer: PyTorch DataLoader ($cores workers, PIL decode, torchvision Resize/CenterCrop/ToTensor/Normalize) with the same do-nothing model: $peer images/s."
	fi
	if [ ${#vit[@]} -gt 0 ]; then
		echo
		echo "| encoder | images | pipeline images/s | bare Run images/s | ratio (goal ≥ 0.9 on a GPU, ≥ 0.95 on a CPU) |"
		echo "|---|---|---|---|---|"
		printf '%s\n' "${vit[@]}"
	fi
	[ "$DEVICE" != cpu ] || { echo; echo "No GPU was lent to this run: the CUDA rows of issue 38 are unverified here; \`DEVICE=cuda bench/pipeline.sh\` on a GPU machine writes them."; }
} >bench/results/pipeline.md
assemble
cat bench/results/pipeline.md
