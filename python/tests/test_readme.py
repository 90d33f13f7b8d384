"""The README's tested blocks (<!-- tested: NAME --> before a fenced block)
run as written, in order, in one folder holding what they start from."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import dpfeat
from fixtures import ROOT, fixture, shell_env

BLOCKS = ["images", "embeddings", "deploy", "python", "privacy", "budget", "views"]


def readme_blocks():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    return [(m.group(1), m.group(2), m.group(3)) for m in re.finditer(r"<!-- tested: (\w+)[^>]*-->\n```(\w+)\n(.*?)```", text, re.S)]


class ReadmeTest(unittest.TestCase):
    def test_blocks(self):
        blocks = readme_blocks()
        self.assertEqual([b[0] for b in blocks], BLOCKS)
        with tempfile.TemporaryDirectory() as tmp:
            fixture(tmp)
            for name, lang, code in blocks:
                if lang == "sh":
                    cmd = ["bash", "-euo", "pipefail", "-c", code]
                else:
                    cmd = [sys.executable, "-c", code]
                proc = subprocess.run(cmd, cwd=tmp, env=shell_env(tmp), capture_output=True, text=True)
                self.assertEqual(proc.returncode, 0, "README block %s:\n%s\n%s" % (name, proc.stdout, proc.stderr))
            for f in ("clf.safetensors", "pred.csv", "embeddings.parquet", "head.onnx", "model.onnx", "photos-pred.csv", "budgeted.safetensors", "views.safetensors"):
                self.assertTrue(os.path.exists(os.path.join(tmp, f)), f)
            with open(os.path.join(tmp, "photos-pred.csv")) as f:
                self.assertEqual(len(f.read().splitlines()), 5)  # header + 4 images
            # #39: the wheel, installed offline into a fresh virtual
            # environment (make python-test), runs the Python block with no
            # PATH to dpfeat and no environment variable.
            venv = os.environ.get("DPFEAT_WHEEL_PYTHON")
            if venv:
                code = dict((n, c) for n, _, c in blocks)["python"]
                env = {"PATH": "/usr/bin:/bin", "HOME": tmp}
                probe = subprocess.run([venv, "-c", "import dpfeat; print(dpfeat.binary())"], cwd=tmp, env=env, capture_output=True, text=True)
                self.assertIn(os.sep + "_bin" + os.sep + "dpfeat", probe.stdout, probe.stderr)
                proc = subprocess.run([venv, "-c", code], cwd=tmp, env=env, capture_output=True, text=True)
                self.assertEqual(proc.returncode, 0, "README block python in the wheel's venv:\n%s\n%s" % (proc.stdout, proc.stderr))


if __name__ == "__main__":
    unittest.main()
