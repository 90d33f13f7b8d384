"""The README's tested blocks run as written (<!-- tested: NAME --> before
a fenced block), in a folder holding what they start from."""

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

import numpy as np

import dpfeat

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def readme_blocks():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    return {m.group(1): (m.group(2), m.group(3)) for m in re.finditer(r"<!-- tested: (\w+)[^>]*-->\n```(\w+)\n(.*?)```", text, re.S)}


def png(path, pixels):
    """Writes a grey 8-bit PNG (no imaging library needed)."""
    h, w = pixels.shape
    raw = b"".join(b"\x00" + bytes(row) for row in pixels.astype(np.uint8))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class ReadmeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.blocks = readme_blocks()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        rng = np.random.default_rng(0)
        names = np.array(["cat", "dog", "emu"])
        y = rng.integers(0, 3, 300)
        X = (rng.normal(size=(3, 16))[y] * 2 + rng.normal(size=(300, 16))).astype(np.float32)
        np.savez(os.path.join(cls.dir, "embeddings.npz"), X=X[:240], y=names[y[:240]])
        np.savez(os.path.join(cls.dir, "new.npz"), X=X[240:])
        dpfeat.run("convert", "--in", os.path.join(cls.dir, "new.npz"), "--out", os.path.join(cls.dir, "new.parquet"))
        os.symlink(os.path.join(ROOT, "models"), os.path.join(cls.dir, "models"))
        for folder, per in (("photos", 8), ("new-photos", 2)):
            for c, name in enumerate(["boot", "shirt"]):
                os.makedirs(os.path.join(cls.dir, folder, name))
                for i in range(per):
                    img = rng.integers(0, 60, (28, 28)) + (120 if c else 0) * (np.arange(28)[:, None] < 14)
                    png(os.path.join(cls.dir, folder, name, "%d.png" % i), img)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def sh(self, name):
        lang, code = self.blocks[name]
        self.assertEqual(lang, "sh")
        env = dict(os.environ, PATH=os.path.dirname(dpfeat.binary()) + os.pathsep + os.environ["PATH"])
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=self.dir, env=env, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, "README block %s:\n%s\n%s" % (name, proc.stdout, proc.stderr))
        return proc

    def test_blocks(self):
        self.assertEqual(sorted(self.blocks), ["deploy", "embeddings", "python"])
        if shutil.which("dpfeat") is None and not os.environ.get("DPFEAT_BIN"):
            self.skipTest("no dpfeat binary")
        self.sh("embeddings")
        for f in ("clf.safetensors", "pred.csv", "train.arrow", "train.parquet"):
            self.assertTrue(os.path.exists(os.path.join(self.dir, f)), f)
        lang, code = self.blocks["python"]
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), DPFEAT_BIN=dpfeat.binary())
        proc = subprocess.run([sys.executable, "-c", code], cwd=self.dir, env=env, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for f in ("clf.safetensors", "pred.csv"):  # outputs are replaced only with --force
            os.remove(os.path.join(self.dir, f))
        self.sh("deploy")
        for f in ("head.onnx", "model.onnx", "pred.csv"):
            self.assertTrue(os.path.exists(os.path.join(self.dir, f)), f)
        with open(os.path.join(self.dir, "pred.csv")) as f:
            self.assertEqual(len(f.read().splitlines()), 5)  # header + 4 images


if __name__ == "__main__":
    unittest.main()
