#!/usr/bin/env bash
# scripts/setup-gpu.sh: one command to run `dpfeat extract --device cuda` on a machine with an
# NVIDIA GPU. It fetches ONNX Runtime 1.29.0 with its CUDA 13 execution provider from npm (the
# CPU build that scripts/setup.sh fetches has no CUDA), finds the CUDA 13 and cuDNN 9 libraries
# the provider loads — a CUDA toolkit, NVIDIA's Python wheels (site-packages/nvidia/**), or the
# system's — and prints the two exports to eval, or names exactly what is missing:
#
#   eval "$(scripts/setup-gpu.sh)"        # then: dpfeat extract --device cuda …
#
# The pair (measured on an H200, see bench/RESULTS.md): libonnxruntime.so.1 of npm
# onnxruntime-node@1.29.0, built with the CUDA provider interface, with
# libonnxruntime_providers_{shared,cuda}.so of npm com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9,
# the same version's CUDA 13 provider (a provider of another version must not be mixed in).
# Files go to .deps/onnxruntime-gpu (override with DPFEAT_GPU_DIR); nothing outside it is changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${DPFEAT_GPU_DIR:-$root/.deps/onnxruntime-gpu}"
mkdir -p "$dir"
say() { echo "setup-gpu: $*" >&2; }
fetch() { # fetch PACKAGE@VERSION PATH-IN-PACKAGE...
	local pkg="$1"; shift
	command -v npm >/dev/null || { say "npm is needed to fetch $pkg (apt-get install npm), or put $* in $dir by hand"; exit 1; }
	local tmp; tmp="$(mktemp -d "$dir/.fetch-XXXXXX")"
	(cd "$tmp" && npm pack -q "$pkg" >/dev/null && tar xzf ./*.tgz "${@/#/package/}") || { rm -rf "$tmp"; say "could not fetch $pkg from npm"; exit 1; }
	for p in "$@"; do mv "$tmp/package/$p" "$dir/"; done
	rm -rf "$tmp"
}
if [ ! -f "$dir/libonnxruntime.so.1" ]; then
	say "fetching ONNX Runtime 1.29.0 (npm onnxruntime-node@1.29.0)"
	fetch onnxruntime-node@1.29.0 bin/napi-v6/linux/x64/libonnxruntime.so.1
fi
if [ ! -f "$dir/libonnxruntime_providers_cuda.so" ]; then
	say "fetching its CUDA 13 provider (npm com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9, about 230 MB)"
	fetch com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9 Plugins/Linux/x64/libonnxruntime_providers_cuda.so Plugins/Linux/x64/libonnxruntime_providers_shared.so
fi

# Folders that may hold the CUDA 13 and cuDNN 9 libraries: NVIDIA's Python wheels, CUDA toolkits,
# and what LD_LIBRARY_PATH already has.
cands=()
for py in python3 /usr/bin/python3; do
	command -v "$py" >/dev/null || continue
	while IFS= read -r d; do [ -n "$d" ] && cands+=("$d"); done < <("$py" - 2>/dev/null <<'PY'
import glob, os, site, sys
roots = set(getattr(site, "getsitepackages", lambda: [])()) | {site.getusersitepackages()} | set(sys.path)
seen = set()
for r in roots:
    for so in glob.glob(os.path.join(r, "nvidia", "**", "lib*.so*"), recursive=True):
        d = os.path.dirname(so)
        if d not in seen:
            seen.add(d); print(d)
PY
)
done
for d in /usr/local/cuda-13*/lib64 /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu; do [ -d "$d" ] && cands+=("$d"); done
path="$dir"
for d in "${cands[@]}"; do case ":$path:" in *":$d:"*) ;; *) path="$path:$d" ;; esac; done
path="$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# What the provider cannot load with that path, by name.
missing="$(LD_LIBRARY_PATH="$path" ldd "$dir/libonnxruntime_providers_cuda.so" 2>/dev/null | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')"
if [ -n "$missing" ]; then
	say "the CUDA provider cannot find: $missing"
	case "$missing" in *libcudnn*) say "  cuDNN 9 for CUDA 13: pip install nvidia-cudnn-cu13 (or NVIDIA's libcudnn9-cuda-13 package)" ;; esac
	wheels=""
	for m in $missing; do
		case "$m" in
		libcudart*) wheels="$wheels nvidia-cuda-runtime-cu13" ;;
		libcublas*) case "$wheels" in *cublas*) ;; *) wheels="$wheels nvidia-cublas-cu13" ;; esac ;;
		libcufft*) wheels="$wheels nvidia-cufft-cu13" ;;
		libcurand*) wheels="$wheels nvidia-curand-cu13" ;;
		libcuda.so*) say "  $m is the NVIDIA driver's: install the driver (Debian: nvidia-driver), which no script can do for you" ;;
		esac
	done
	[ -z "$wheels" ] || say "  the CUDA 13 runtime: a CUDA 13 toolkit, or pip install$wheels"
	say "then run this again (it searches Python's site-packages/nvidia, /usr/local/cuda*/lib64 and LD_LIBRARY_PATH)"
	exit 1
fi
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	say "note: nvidia-smi lists no GPU here; --device cuda will say so (the driver is not part of this setup)"
fi
say "ready: eval the two lines below, then dpfeat extract --device cuda …"
echo "export ONNXRUNTIME_LIB=\"$dir/libonnxruntime.so.1\""
echo "export LD_LIBRARY_PATH=\"$path\""
