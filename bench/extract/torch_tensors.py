#!/usr/bin/python3
"""Independent preprocessing of Fashion-MNIST for the extraction check.

Writes the first N test images as the shared encoders expect them, computed
with PyTorch alone (no dpfeat code): 28×28 grey → bilinear 32×32
(align_corners=False) → /255 → (x − 0.286)/0.353 → grey repeated to 3
channels, float32 NCHW, raw little-endian.

    /usr/bin/python3 bench/extract/torch_tensors.py N OUT.f32
"""
import gzip
import sys

import numpy as np
import torch
import torch.nn.functional as F

n, out = int(sys.argv[1]), sys.argv[2]
with gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz") as f:
    raw = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 1, 28, 28)[:n]
x = torch.from_numpy(raw.astype(np.float32))
x = F.interpolate(x, size=(32, 32), mode="bilinear", align_corners=False)
x = (x / 255 - 0.286) / 0.353
x = x.repeat(1, 3, 1, 1).contiguous()
x.numpy().astype("<f4").tofile(out)
print(f"wrote {out}: {tuple(x.shape)}")
