#!/usr/bin/env bash
# Provides what dpfeat needs on a fresh Debian machine, and does nothing (in
# well under a second) when it is all there already:
#   - Debian packages: OpenBLAS and LAPACKE headers (the accelerated linear
#     algebra backend), dataset-fashion-mnist (the benchmark data), and
#     python3-numpy, python3-sklearn, python3-matplotlib (the Python
#     package's tests) and chromium (the HTML report's rendering test);
#   - ONNX Runtime's shared library: $ONNXRUNTIME_LIB if set, else
#     libonnxruntime.so.1 taken from the npm package onnxruntime-node@1.30.0
#     into .deps/onnxruntime/ (git-ignored).
# Prints the path of the ONNX Runtime library on its last line.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.deps"
ort_version="1.30.0"

log() { echo "setup: $*" >&2; }
die() { echo "setup: $*" >&2; exit 1; }

as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root (or sudo) to run: $*"
	fi
}

apt_updated=""
apt_install() {
	local missing=()
	local p
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
			missing+=("$p")
		fi
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	command -v apt-get >/dev/null 2>&1 || die "not a Debian machine: install ${missing[*]} by hand"
	log "installing ${missing[*]} from Debian"
	if [ -z "$apt_updated" ]; then
		as_root apt-get update -qq
		apt_updated=1
	fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

apt_install libopenblas-dev liblapacke-dev dataset-fashion-mnist python3-numpy python3-sklearn python3-matplotlib chromium

if [ -n "${ONNXRUNTIME_LIB:-}" ] && [ "$ONNXRUNTIME_LIB" != "$deps/onnxruntime/libonnxruntime.so.1" ]; then
	[ -f "$ONNXRUNTIME_LIB" ] || die "ONNXRUNTIME_LIB=$ONNXRUNTIME_LIB: no such file (unset it to fetch ONNX Runtime $ort_version from npm)"
	echo "$ONNXRUNTIME_LIB"
	exit 0
fi

lib="$deps/onnxruntime/libonnxruntime.so.1"
stamp="$deps/onnxruntime/VERSION"
if [ -f "$lib" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$ort_version" ]; then
	echo "$lib"
	exit 0
fi

case "$(uname -m)" in
	x86_64 | amd64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) die "ONNX Runtime from npm has no build for $(uname -m); set ONNXRUNTIME_LIB to a libonnxruntime.so of version $ort_version" ;;
esac
command -v npm >/dev/null 2>&1 || apt_install npm

log "fetching ONNX Runtime $ort_version (npm package onnxruntime-node)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "onnxruntime-node@$ort_version" >/dev/null 2>"$tmp/npm.log") ||
	die "npm pack onnxruntime-node@$ort_version failed: $(tail -3 "$tmp/npm.log")"
member="package/bin/napi-v6/linux/$arch/libonnxruntime.so.1"
tar -xzf "$tmp/onnxruntime-node-$ort_version.tgz" -C "$tmp" "$member" ||
	die "onnxruntime-node-$ort_version.tgz has no $member"
mkdir -p "$deps/onnxruntime"
# Write beside the target, then rename: an interrupted setup never leaves a
# truncated library behind.
cp "$tmp/$member" "$lib.tmp"
mv -f "$lib.tmp" "$lib"
echo "$ort_version" >"$stamp.tmp" && mv -f "$stamp.tmp" "$stamp"
log "ONNX Runtime $ort_version at $lib"
echo "$lib"
