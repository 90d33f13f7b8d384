"""models/export_encoder.py: every failure a new user meets first (no
torch, no timm, no network, a checkpoint that does not fit) is one line
saying what to do; with torch present, an export runs through dpfeat
extract. The torch cases are skipped where torch is not installed (CI)."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import dpfeat
from fixtures import ROOT, png

SCRIPT = os.path.join(ROOT, "models", "export_encoder.py")
HAS_TORCH = importlib.util.find_spec("torch") is not None and importlib.util.find_spec("torchvision") is not None


def run(args, hide=(), env=None):
    """Runs the script with the modules in hide made unimportable."""
    code = "import runpy, sys\n" + "".join("sys.modules[%r] = None\n" % m for m in hide) + \
        "sys.argv = %r\nrunpy.run_path(%r, run_name='__main__')\n" % (["export_encoder.py"] + args, SCRIPT)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ, **(env or {})))


class OneLineErrors(unittest.TestCase):
    def assertOneLine(self, proc, want):
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(want, proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertTrue(proc.stderr.startswith("export_encoder.py: "), proc.stderr)

    def test_without_torch(self):
        self.assertOneLine(run(["torchvision:resnet18", "-o", "x.onnx"], hide=("torch",)), "apt install python3-torch")

    @unittest.skipUnless(HAS_TORCH, "needs torch and torchvision")
    def test_without_timm(self):
        self.assertOneLine(run(["timm:resnet50", "-o", "x.onnx"], hide=("timm",)), "pip install timm")

    @unittest.skipUnless(HAS_TORCH, "needs torch and torchvision")
    def test_offline(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.onnx")
            # An empty hub cache and a proxy that refuses: as offline.
            env = {"TORCH_HOME": os.path.join(tmp, "hub"), "https_proxy": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
            proc = run(["torchvision:resnet18", "-o", out], env=env)
            # torch prints its own "Downloading:" line first.
            lines = [l for l in proc.stderr.splitlines() if not l.startswith("Downloading")]
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertEqual(len(lines), 1, proc.stderr)
            for want in ("could not download", "resnet18-f37072fd.pth", "--checkpoint", "--no-weights"):
                self.assertIn(want, lines[0])
            self.assertFalse(os.path.exists(out))

    @unittest.skipUnless(HAS_TORCH, "needs torch and torchvision")
    def test_checkpoint_and_extract(self):
        import torch
        import torchvision
        with tempfile.TemporaryDirectory() as tmp:
            model = torchvision.models.resnet18(weights=None, num_classes=10)
            ckpt = os.path.join(tmp, "mine.pt")
            # A training checkpoint from DataParallel: "module." prefixes, another head.
            torch.save({"state_dict": {"module." + k: v for k, v in model.state_dict().items()}}, ckpt)
            bad = os.path.join(tmp, "bad.pt")
            torch.save({"conv1.weight": torch.zeros(1)}, bad)
            out = os.path.join(tmp, "enc.onnx")
            self.assertOneLine(run(["torchvision:resnet18", "--checkpoint", bad, "-o", out]), "does not fit the model")
            self.assertFalse(os.path.exists(out))
            proc = run(["torchvision:resnet18", "--checkpoint", ckpt, "-o", out])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("D = 512", proc.stdout)
            with open(os.path.join(tmp, "enc.json")) as f:
                man = json.load(f)
            self.assertEqual((man["input"]["height"], man["input"]["resize_size"], man["output"]["dim"]), (224, 256, 512))
            self.assertOneLine(run(["torchvision:resnet18", "--no-weights", "-o", out]), "exists: pass --force")
            # The export runs through dpfeat extract as it is.
            rng = np.random.default_rng(0)
            for cls in ("a", "b"):
                os.makedirs(os.path.join(tmp, "img", cls))
                for i in range(2):
                    png(os.path.join(tmp, "img", cls, "%d.png" % i), rng.integers(0, 256, (40, 30)))
            feats = os.path.join(tmp, "f.arrow")
            proc = subprocess.run([dpfeat.binary(), "extract", "--encoder", out, "--data", os.path.join(tmp, "img"), "--out", feats, "--quiet", "--json"],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            res = json.loads(proc.stdout)
            self.assertEqual((res["rows"], res["dim"]), (4, 512))


if __name__ == "__main__":
    unittest.main()
