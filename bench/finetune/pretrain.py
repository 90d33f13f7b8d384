#!/usr/bin/python3
"""Phase I stand-in for bench/finetune.sh: a small CNN trained without
privacy on Fashion-MNIST's public half (train rows 0-29999) only, exported as
a dpfeat training graph with its parameters and a manifest. (DP-RandP's
Phase I learns from images of random processes; the public half plays that
role here: no private row is touched.)

    /usr/bin/python3 bench/finetune/pretrain.py OUTDIR
"""
import gzip
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from export_training_graph import export  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
src = "/usr/share/datasets/fashion-mnist"
with gzip.open(f"{src}/train-images-idx3-ubyte.gz") as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)[:30000]
with gzip.open(f"{src}/train-labels-idx1-ubyte.gz") as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)[:30000]
mean, std = 0.2860, 0.3530
x = (torch.tensor(x, dtype=torch.float32) / 255 - mean) / std
y = torch.tensor(y, dtype=torch.int64)
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 8, 3, stride=2), nn.Tanh(),   # 13×13
    nn.Conv2d(8, 16, 3, stride=2), nn.Tanh(),  # 6×6
    nn.Flatten(), nn.Linear(16 * 6 * 6, 10),
)
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
for epoch in range(2):
    perm = torch.randperm(len(x))
    for i in range(0, len(x), 128):
        b = perm[i : i + 128]
        opt.zero_grad()
        F.cross_entropy(model(x[b]), y[b]).backward()
        opt.step()
    with torch.no_grad():
        acc = (model(x[:5000]).argmax(1) == y[:5000]).float().mean().item()
    print(f"epoch {epoch + 1}: public-half training accuracy {acc:.4f}", file=sys.stderr)
# A fresh head: Phase II learns it privately (the public head is discarded).
with torch.no_grad():
    model[5].weight.zero_()
    model[5].bias.zero_()
export(model, x[:8], f"{out}/cnn-train.onnx", labels=y[:8], params_out=f"{out}/cnn-init.safetensors", forward_out=f"{out}/cnn-forward.onnx")
json.dump({"name": "fmnist-small-cnn", "input": {"layout": "NCHW", "channels": 1, "height": 28, "width": 28,
           "mean": [mean], "std": [std]}, "output": {"name": "loss", "dim": 1, "pool": "none"},
           "pretrained_on": "Fashion-MNIST train rows 0-29999 (public half), without privacy"},
          open(f"{out}/cnn.json", "w"), indent=1)
print(f"wrote {out}/cnn-train.onnx, cnn-init.safetensors, cnn.json", file=sys.stderr)
