#!/usr/bin/python3
"""Trains the small encoder that `make demo` uses, on public data only.

Fashion-MNIST train rows 0–29999 are the public half (the benchmark
convention of ../shared/encoders); rows 30000–59999 are the private half that
dpfeat's DP solvers train on, and the test set is for evaluation. This
encoder never sees the private half or the test set.

    /usr/bin/python3 models/demo/train_demo_encoder.py

Writes models/demo/fmnist-cnn.onnx and its manifest fmnist-cnn.json
(Debian python3-torch; about a minute on two cores; seeded).
"""
import gzip
import hashlib
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/usr/share/datasets/fashion-mnist"
torch.manual_seed(0)
torch.set_num_threads(os.cpu_count() or 1)


def idx(name, offset):
    with gzip.open(os.path.join(DATA, name)) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


x = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)[:30000]
y = idx("train-labels-idx1-ubyte.gz", 8)[:30000]
MEAN, STD = 0.286, 0.353
xt = (torch.from_numpy(x.astype(np.float32)) / 255 - MEAN) / STD
yt = torch.from_numpy(y.astype(np.int64))


class Encoder(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.c1 = nn.Conv2d(1, 32, 3, padding=1)
        self.b1 = nn.BatchNorm2d(32)
        self.c2 = nn.Conv2d(32, 64, 3, padding=1)
        self.b2 = nn.BatchNorm2d(64)
        self.c3 = nn.Conv2d(64, dim, 3, padding=1)
        self.b3 = nn.BatchNorm2d(dim)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
        x = F.max_pool2d(F.relu(self.b2(self.c2(x))), 2)
        x = F.relu(self.b3(self.c3(x)))
        return x.mean(dim=(2, 3))


enc = Encoder()
head = nn.Linear(64, 10)
opt = torch.optim.AdamW(list(enc.parameters()) + list(head.parameters()), lr=3e-3, weight_decay=1e-4)
steps = 3 * (30000 // 128)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
step = 0
for epoch in range(3):
    perm = torch.randperm(30000)
    for i in range(0, 30000 - 127, 128):
        b = perm[i:i + 128]
        xb = xt[b]
        if torch.rand(1).item() < 0.5:
            xb = xb.flip(3)
        loss = F.cross_entropy(head(enc(xb)), yt[b], label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        step += 1
    print(f"epoch {epoch}: loss {loss.item():.3f}")

enc.eval()
head.eval()
xs = idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
ys = idx("t10k-labels-idx1-ubyte.gz", 8)
with torch.no_grad():
    pred = head(enc((torch.from_numpy(xs.astype(np.float32)) / 255 - MEAN) / STD)).argmax(1).numpy()
acc = float((pred == ys).mean())
print(f"public-half head accuracy on the test set: {acc:.4f}")

path = os.path.join(HERE, "fmnist-cnn.onnx")
torch.onnx.export(enc, torch.zeros(2, 1, 28, 28), path, input_names=["pixel_values"], output_names=["features"],
                  dynamic_axes={"pixel_values": {0: "batch"}, "features": {0: "batch"}}, opset_version=17)
with open(path, "rb") as f:
    sha = hashlib.sha256(f.read()).hexdigest()
manifest = {
    "name": "fmnist-cnn",
    "file": "fmnist-cnn.onnx",
    "sha256": sha,
    "input": {"name": "pixel_values", "layout": "NCHW", "channels": 1, "height": 28, "width": 28,
              "scale": 1 / 255, "mean": [MEAN], "std": [STD], "resize": "bilinear", "crop": "none"},
    "output": {"name": "features", "dim": 64, "pool": "none"},
    "pretrained_on": "Fashion-MNIST train rows 0..29999 (the public half); labels used",
    "public_head_test_accuracy": acc,
    "architecture": "3 conv layers (32-64-64) with batch norm, global average pool; 64 features",
    "training": "AdamW, one-cycle LR 3e-3, 3 epochs, batch 128, label smoothing 0.1, random horizontal flip; seed 0; models/demo/train_demo_encoder.py",
}
with open(os.path.join(HERE, "fmnist-cnn.json"), "w") as f:
    json.dump(manifest, f, indent=2)
print("wrote", path, os.path.getsize(path), "bytes")
