#!/usr/bin/python3
"""Regenerates dpfeat's small test encoders and golden tensors in testdata/.

Run with Debian's python3 (apt install python3-torch python3-torchvision python3-onnx):

    /usr/bin/python3 testdata/gen/make_testdata.py

Everything is seeded; the outputs are committed, so tests never run this.
  encoders/tiny-cnn.onnx        conv net, [N,3,16,16] -> features [N,8] and feature_map [N,8,4,4]
  encoders/tiny-vit.onnx        patch-4 ViT block, [N,3,16,16] -> last_hidden_state [N,17,16]
  encoders/tiny-fp16.onnx       float16 in/out graph, [N,3,4,4] -> features [N,6]
  encoders/*.json               their manifests
  encoders/*.golden.json        a fixed input batch and torch's outputs for it
  preprocess-golden.json        torchvision transforms on a small image, several manifests
"""
import hashlib
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import torch
import torch.nn as nn
import torchvision.transforms as T
import torchvision.transforms.functional as TF

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, ".."))
ENC = os.path.join(OUT, "encoders")
os.makedirs(ENC, exist_ok=True)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))

    def forward(self, x):
        fmap = self.body(x)
        return fmap.mean(dim=(2, 3)), fmap


class TinyViT(nn.Module):
    def __init__(self, dim=16, patch=4, size=16):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.1)
        self.pos = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, dim) * 0.1)
        self.block = nn.TransformerEncoderLayer(dim, 2, 32, dropout=0.0, batch_first=True)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(x.shape[0], -1, -1), t], dim=1) + self.pos
        return self.norm(self.block(t))


def export(model, name, outputs, manifest):
    model.eval()
    path = os.path.join(ENC, name + ".onnx")
    x = torch.randn(2, 3, 16, 16)
    dyn = {"pixel_values": {0: "batch"}}
    for o in outputs:
        dyn[o] = {0: "batch"}
    torch.onnx.export(model, x, path, input_names=["pixel_values"], output_names=outputs,
                      dynamic_axes=dyn, opset_version=17)
    manifest["file"] = name + ".onnx"
    manifest["sha256"] = sha256(path)
    with open(os.path.join(ENC, name + ".json"), "w") as f:
        json.dump(manifest, f, indent=2)
    g = torch.Generator().manual_seed(7)
    batch = torch.rand(3, 3, 16, 16, generator=g) * 4 - 2
    with torch.no_grad():
        res = model(batch)
    if not isinstance(res, tuple):
        res = (res,)
    golden = {"input_shape": list(batch.shape), "input": batch.flatten().tolist(),
              "outputs": {o: {"shape": list(r.shape), "values": r.flatten().tolist()} for o, r in zip(outputs, res)}}
    with open(os.path.join(ENC, name + ".golden.json"), "w") as f:
        json.dump(golden, f)


def tiny_fp16():
    path = os.path.join(ENC, "tiny-fp16.onnx")
    rng = np.random.default_rng(3)
    w = rng.standard_normal((48, 6)).astype(np.float32) * 0.2
    nodes = [
        helper.make_node("Cast", ["pixel_values"], ["x32"], to=TensorProto.FLOAT),
        helper.make_node("Flatten", ["x32"], ["flat"], axis=1),
        helper.make_node("MatMul", ["flat", "w"], ["y32"]),
        helper.make_node("Cast", ["y32"], ["features"], to=TensorProto.FLOAT16),
    ]
    graph = helper.make_graph(
        nodes, "tiny-fp16",
        [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT16, ["batch", 3, 4, 4])],
        [helper.make_tensor_value_info("features", TensorProto.FLOAT16, ["batch", 6])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    manifest = {"name": "tiny-fp16", "file": "tiny-fp16.onnx", "sha256": sha256(path),
                "input": {"name": "pixel_values", "layout": "NCHW", "channels": 3, "height": 4, "width": 4, "dtype": "float16"},
                "output": {"name": "features", "dim": 6, "pool": "none"},
                "description": "test graph: float16 input and output around a float32 MatMul"}
    with open(os.path.join(ENC, "tiny-fp16.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    x = (rng.random((2, 3, 4, 4)) * 2 - 1).astype(np.float16)
    y = (x.astype(np.float32).reshape(2, 48) @ w).astype(np.float16)
    golden = {"input_shape": [2, 3, 4, 4], "input": x.astype(np.float32).flatten().tolist(),
              "outputs": {"features": {"shape": [2, 6], "values": y.astype(np.float32).flatten().tolist()}}}
    with open(os.path.join(ENC, "tiny-fp16.golden.json"), "w") as f:
        json.dump(golden, f)


def preprocess_golden():
    """torchvision transforms on tensors (antialias=True) of a 13×9 RGB image."""
    h, w = 9, 13
    img = np.zeros((h, w, 3), dtype=np.uint8)
    for y in range(h):
        for x in range(w):
            img[y, x] = [(x * 19 + y * 7) % 256, (x * x + 3 * y) % 256, (255 - 11 * x - 5 * y) % 256]
    t = torch.from_numpy(img).permute(2, 0, 1).float()  # C,H,W in 0..255
    cases = []

    def add(name, manifest_input, pipeline):
        out = pipeline(t.clone())
        cases.append({"name": name, "input": manifest_input, "shape": list(out.shape), "values": out.flatten().tolist()})

    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    norm = T.Normalize(mean, std)
    add("bilinear up to 16x20", {"layout": "NCHW", "channels": 3, "height": 16, "width": 20, "mean": mean, "std": std, "resize": "bilinear"},
        lambda x: norm(TF.resize(x, [16, 20], T.InterpolationMode.BILINEAR, antialias=True) / 255))
    add("bilinear down to 5x7", {"layout": "NCHW", "channels": 3, "height": 5, "width": 7, "mean": mean, "std": std, "resize": "bilinear"},
        lambda x: norm(TF.resize(x, [5, 7], T.InterpolationMode.BILINEAR, antialias=True) / 255))
    add("bicubic shorter 6 then center crop 5", {"layout": "NCHW", "channels": 3, "height": 5, "width": 5, "mean": [0.5] * 3, "std": [0.5] * 3,
                                                  "resize": "bicubic", "crop": "center", "resize_size": 6},
        lambda x: TF.normalize(TF.center_crop(TF.resize(x, 6, T.InterpolationMode.BICUBIC, antialias=True), 5) / 255, [0.5] * 3, [0.5] * 3))
    add("bilinear shorter 7 crop_pct, crop 6", {"layout": "NCHW", "channels": 3, "height": 6, "width": 6, "mean": mean, "std": std,
                                                 "resize": "bilinear", "crop": "center", "crop_pct": 0.875},
        lambda x: norm(TF.center_crop(TF.resize(x, 6 * 8 // 7, T.InterpolationMode.BILINEAR, antialias=True), 6) / 255))
    with open(os.path.join(OUT, "preprocess-golden.json"), "w") as f:
        json.dump({"image": {"width": w, "height": h, "channels": 3, "data": img.flatten().tolist()}, "cases": cases}, f)


torch.manual_seed(0)
export(TinyCNN(), "tiny-cnn", ["features", "feature_map"],
       {"name": "tiny-cnn", "input": {"name": "pixel_values", "layout": "NCHW", "channels": 3, "height": 16, "width": 16,
                                     "mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]},
        "output": {"name": "features", "dim": 8, "pool": "none"},
        "description": "test encoder: two conv layers with fixed random weights; also outputs its feature map"})
torch.manual_seed(1)
export(TinyViT(), "tiny-vit", ["last_hidden_state"],
       {"name": "tiny-vit", "input": {"name": "pixel_values", "layout": "NCHW", "channels": 3, "height": 16, "width": 16,
                                     "mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5]},
        "output": {"name": "last_hidden_state", "dim": 16, "pool": "cls"},
        "description": "test encoder: patch-4 embedding, one transformer block, fixed random weights"})
tiny_fp16()
preprocess_golden()
print("wrote", sorted(os.listdir(ENC)))
