#!/usr/bin/python3
"""DP-RandP benchmark model (issue 23): the small CNN of bench/finetune
(two strided tanh convolutions and a linear head, 7,018 parameters) at a
seeded random initialisation — no data of any kind — exported as
dpfeat's training graph (+ forward graph) and as the pretraining graphs of
its feature extractor (the first five layers: a 576-wide embedding), with
a manifest for 28×28 grey images.

    /usr/bin/python3 bench/randp/export.py OUTDIR
"""
import json
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "models"))
from export_training_graph import export, export_pretrain  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 8, 3, stride=2), nn.Tanh(),   # 13×13
    nn.Conv2d(8, 16, 3, stride=2), nn.Tanh(),  # 6×6
    nn.Flatten(), nn.Linear(16 * 6 * 6, 10),
)
with torch.no_grad():  # the head starts at zero: Phase II (or III) learns it
    model[5].weight.zero_()
    model[5].bias.zero_()
x = torch.randn(8, 1, 28, 28)
y = torch.arange(8) % 10
export(model, x, f"{out}/cnn-train.onnx", labels=y, params_out=f"{out}/cnn-init.safetensors", forward_out=f"{out}/cnn-forward.onnx")
export_pretrain(model, 5, x, f"{out}/cnn-vjp.onnx", f"{out}/cnn-embed.onnx")
mean, std = 0.5, 0.5  # data-independent: no statistic of any dataset
json.dump({"name": "randp-small-cnn", "input": {"layout": "NCHW", "channels": 1, "height": 28, "width": 28,
           "mean": [mean], "std": [std]}, "output": {"name": "loss", "dim": 1, "pool": "none"}},
          open(f"{out}/cnn.json", "w"), indent=1)
print(f"wrote {out}/cnn-train.onnx, cnn-forward.onnx, cnn-embed.onnx, cnn-vjp.onnx, cnn-init.safetensors, cnn.json", file=sys.stderr)
