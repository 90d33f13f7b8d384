#!/usr/bin/env python3
"""Export a timm or torchvision image encoder to ONNX for `dpfeat extract`.

The model is exported without its classifier, so that it outputs one pooled
feature vector per image ("features", [N, D]), with a dynamic batch axis
("pixel_values", [N, 3, H, W]); a manifest ENC.json is written beside ENC.onnx
with the model's own eval preprocessing (resize, center crop, mean, std).

    # torchvision (weights from torchvision's hub cache or download)
    python3 models/export_encoder.py torchvision:resnet50 --weights IMAGENET1K_V2 -o resnet50.onnx
    # timm (pip install timm): any model name timm.create_model accepts
    python3 models/export_encoder.py timm:vit_base_patch16_224.augreg2_in21k_ft_in1k -o vitb16.onnx
    # then
    dpfeat extract --model resnet50.onnx --data IMAGES --out feats.arrow

Needs torch (Debian: python3-torch, python3-torchvision); --no-weights exports
a randomly initialised network, for trying the pipeline offline.
"""
import argparse
import hashlib
import json
import math
import os

import torch
import torch.nn as nn


def torchvision_encoder(name, weights):
    import torchvision.models as tvm
    if weights:
        w = getattr(tvm.get_model_weights(name), weights)  # e.g. IMAGENET1K_V2, or DEFAULT
        model = tvm.get_model(name, weights=w)
        t = w.transforms()
        pre = {"height": t.crop_size[0], "width": t.crop_size[0], "resize_size": t.resize_size[0],
               "mean": list(t.mean), "std": list(t.std), "resize": t.interpolation.value}
    else:
        model = tvm.get_model(name, weights=None)
        pre = {"height": 224, "width": 224, "resize_size": 256, "mean": [0.485, 0.456, 0.406],
               "std": [0.229, 0.224, 0.225], "resize": "bilinear"}
    # Drop the classifier: ResNets/RegNets have .fc, ViTs .heads,
    # ConvNeXt/EfficientNet/VGG .classifier (keep its flatten/norm layers).
    if hasattr(model, "fc"):
        model.fc = nn.Identity()
    elif hasattr(model, "heads"):
        model.heads = nn.Identity()
    elif hasattr(model, "classifier"):
        if isinstance(model.classifier, nn.Sequential):
            layers = [m for m in model.classifier if not isinstance(m, (nn.Linear, nn.Dropout))]
            model.classifier = nn.Sequential(*layers)
        else:
            model.classifier = nn.Identity()
    else:
        raise SystemExit(f"do not know how to remove the classifier of {name}")
    return model, pre


def timm_encoder(name, pretrained):
    import timm
    model = timm.create_model(name, pretrained=pretrained, num_classes=0)  # pooled features
    cfg = timm.data.resolve_data_config({}, model=model)
    size = cfg["input_size"][1]
    pre = {"height": cfg["input_size"][1], "width": cfg["input_size"][2],
           "resize_size": int(math.floor(size / cfg["crop_pct"])),
           "mean": list(cfg["mean"]), "std": list(cfg["std"]), "resize": cfg["interpolation"]}
    return model, pre


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="torchvision:NAME or timm:NAME")
    ap.add_argument("-o", "--out", required=True, help="ONNX file to write (the manifest goes beside it)")
    ap.add_argument("--weights", help="torchvision weights enum name, e.g. IMAGENET1K_V2 (default: DEFAULT)")
    ap.add_argument("--no-weights", action="store_true", help="random initialisation (offline trial)")
    ap.add_argument("--opset", type=int, default=17)
    args = ap.parse_args()
    kind, _, name = args.model.partition(":")
    if kind == "torchvision":
        model, pre = torchvision_encoder(name, None if args.no_weights else (args.weights or "DEFAULT"))
    elif kind == "timm":
        model, pre = timm_encoder(name, not args.no_weights)
    else:
        raise SystemExit("model must be torchvision:NAME or timm:NAME")
    model.eval()
    x = torch.zeros(2, 3, pre["height"], pre["width"])
    with torch.no_grad():
        dim = model(x).shape[-1]
    torch.onnx.export(model, x, args.out, input_names=["pixel_values"], output_names=["features"],
                      dynamic_axes={"pixel_values": {0: "batch"}, "features": {0: "batch"}}, opset_version=args.opset)
    with open(args.out, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    manifest = {
        "name": name, "file": os.path.basename(args.out), "sha256": sha,
        "input": {"name": "pixel_values", "layout": "NCHW", "channels": 3, "height": pre["height"], "width": pre["width"],
                  "mean": pre["mean"], "std": pre["std"], "resize": pre["resize"], "crop": "center",
                  "resize_size": pre["resize_size"], "round_after_resize": True},
        "output": {"name": "features", "dim": int(dim), "pool": "none"},
        "source": args.model + ("" if not args.no_weights else " (random weights)"),
    }
    path = os.path.splitext(args.out)[0] + ".json"
    with open(path, "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"wrote {args.out} (D = {dim}) and {path}")


if __name__ == "__main__":
    main()
