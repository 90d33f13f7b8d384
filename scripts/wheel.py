#!/usr/bin/env python3
"""Builds the dpfeat platform wheel — the Python package with the dpfeat
binary and the ONNX Runtime library it loads inside, the way Go- and
Rust-built Python tools ship theirs — with the standard library alone (no
setuptools, no network): `make wheel` runs it.

    python3 scripts/wheel.py BINARY LIBONNXRUNTIME OUTDIR

The binary goes to dpfeat/_bin/dpfeat and the library to
dpfeat/_bin/lib/libonnxruntime.so.1, where the binary looks first; the
package finds the binary there (dpfeat._binary.binary), so `import dpfeat`
needs no PATH or environment variable. The wheel is tagged for this
platform (py3-none-linux_<machine>): the binary is native code.
"""

import base64
import hashlib
import os
import platform
import re
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def project():
    """Name, version, summary and dependencies from python/pyproject.toml
    (read with a regex: tomllib is Python ≥ 3.11)."""
    text = open(os.path.join(ROOT, "python", "pyproject.toml"), encoding="utf-8").read()
    get = lambda key: re.search(r'^%s\s*=\s*"([^"]*)"' % key, text, re.M).group(1)  # noqa: E731
    deps = re.findall(r'"([^"]+)"', re.search(r"^dependencies\s*=\s*\[([^\]]*)\]", text, re.M).group(1))
    return get("name"), get("version"), get("description"), get("requires-python"), deps


def main(binary, lib, outdir):
    name, version, summary, requires, deps = project()
    tag = "py3-none-linux_" + platform.machine()
    files = []  # (archive name, bytes, executable)
    pkg = os.path.join(ROOT, "python", "dpfeat")
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py"):
            files.append(("dpfeat/" + f, open(os.path.join(pkg, f), "rb").read(), False))
    files.append(("dpfeat/_bin/dpfeat", open(binary, "rb").read(), True))
    files.append(("dpfeat/_bin/lib/libonnxruntime.so.1", open(lib, "rb").read(), False))
    info = "%s-%s.dist-info" % (name, version)
    readme = open(os.path.join(ROOT, "python", "README.md"), encoding="utf-8").read()
    meta = ["Metadata-Version: 2.1", "Name: " + name, "Version: " + version, "Summary: " + summary,
            "License: Apache-2.0", "Requires-Python: " + requires]
    meta += ["Requires-Dist: " + d for d in deps]
    meta += ["Provides-Extra: sklearn", 'Requires-Dist: scikit-learn; extra == "sklearn"', "Description-Content-Type: text/markdown", "", readme]
    files.append((info + "/METADATA", "\n".join(meta).encode(), False))
    files.append((info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: dpfeat scripts/wheel.py\nRoot-Is-Purelib: false\nTag: %s\n" % tag).encode(), False))
    license_path = os.path.join(ROOT, "LICENSE")
    if os.path.exists(license_path):
        files.append((info + "/LICENSE", open(license_path, "rb").read(), False))
    record = []
    for arc, data, _ in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (arc, digest, len(data)))
    record.append(info + "/RECORD,,")
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode(), False))
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "%s-%s-%s.whl" % (name, version, tag))
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for arc, data, executable in files:
            zi = zipfile.ZipInfo(arc, date_time=(2026, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o100755 if executable else 0o100644) << 16
            z.writestr(zi, data)
    os.replace(tmp, out)
    print(out)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: scripts/wheel.py BINARY LIBONNXRUNTIME OUTDIR")
    main(*sys.argv[1:])
