#!/usr/bin/env bash
# Extraction benchmark and check on the shared encoders (../shared/encoders)
# and Fashion-MNIST's test set. Writes bench/results/extract.json.
# Needs: make setup; for the PyTorch-tensor check, Debian's python3-torch.
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
echo "]" >>"$out.tmp"
mv "$out.tmp" "$out"
[ -z "$tensors" ] || rm -f "$tensors"
cat "$out"
