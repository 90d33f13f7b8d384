#!/usr/bin/env python3
"""Export a torchvision or timm image encoder to ONNX for `dpfeat extract`.

The model is exported without its classifier, so that it outputs one pooled
feature vector per image ("features", [N, D]), with a dynamic batch axis
("pixel_values", [N, 3, H, W]); a manifest ENC.json is written beside ENC.onnx
with the model's own eval preprocessing (resize, center crop, mean, std).

    # torchvision: weights from torch's hub cache (~/.cache/torch/hub/checkpoints),
    # downloaded there when online
    python3 models/export_encoder.py torchvision:resnet50 --weights IMAGENET1K_V2 -o resnet50.onnx
    # a local checkpoint (torch.save(model.state_dict(), "mine.pt"))
    python3 models/export_encoder.py torchvision:resnet50 --checkpoint mine.pt -o mine.onnx
    # random weights, to try the pipeline offline
    python3 models/export_encoder.py torchvision:resnet18 --no-weights -o try.onnx
    # timm (not in Debian: pip install timm); weights from the Hugging Face cache
    # (HF_HUB_OFFLINE=1 when offline) or --checkpoint
    python3 models/export_encoder.py timm:vit_base_patch16_224.augreg2_in21k_ft_in1k -o vitb16.onnx
    # then
    dpfeat extract --encoder resnet50.onnx --data IMAGES --out feats.arrow

ONNX files exported elsewhere (Hugging Face optimum, tf2onnx) need no script:
give dpfeat extract a manifest (--manifest) or a built-in one (--preset).

Needs torch and torchvision (Debian: python3-torch, python3-torchvision). With
torch 2.5 or later it uses torch's current exporter (dynamo=True, opset 18);
with older torch the TorchScript one (opset 17). Errors are one line saying
what to do, offline included.
"""
import argparse
import hashlib
import inspect
import json
import math
import os
import sys

PROG = "export_encoder.py"

try:
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit(f"{PROG}: needs PyTorch, which {sys.executable} cannot import: apt install python3-torch "
             "python3-torchvision (Debian; run it with /usr/bin/python3), or pip install torch torchvision")


def fail(msg):
    """Exits with one line: what went wrong and what to do."""
    sys.exit(f"{PROG}: {msg}")


def offline(err):
    """Whether err is a failed download (no network, proxy, DNS, TLS, or
    the Hugging Face Hub's offline mode), as opposed to a bug."""
    import urllib.error
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        name = type(err).__name__
        if isinstance(err, (urllib.error.URLError, ConnectionError, TimeoutError)) or name in (
                "LocalEntryNotFoundError", "OfflineModeIsEnabled", "ConnectError", "MaxRetryError", "SSLError"):
            return True
        err = err.__cause__ or err.__context__
    return False


def torchvision_encoder(name, weights, checkpoint):
    """The torchvision model without its classifier, and the eval
    preprocessing of its weights (their transforms are known offline)."""
    import torchvision.models as tvm
    try:
        enum = tvm.get_model_weights(name)
    except (ValueError, KeyError):
        fail(f"torchvision has no model {name!r}; known: {', '.join(tvm.list_models())}")
    try:
        w = getattr(enum, weights or "DEFAULT")
    except AttributeError:
        fail(f"--weights {weights}: {name} has {', '.join(m.name for m in enum)} (or DEFAULT)")
    t = w.transforms()
    pre = {"height": t.crop_size[0], "width": t.crop_size[0], "resize_size": t.resize_size[0],
           "mean": list(t.mean), "std": list(t.std), "resize": t.interpolation.value}
    if weights is None and checkpoint is None:
        model = tvm.get_model(name, weights=None)
    elif checkpoint is not None:
        model = tvm.get_model(name, weights=None)
    else:
        cached = os.path.join(torch.hub.get_dir(), "checkpoints", os.path.basename(w.url))
        try:
            model = tvm.get_model(name, weights=w)
        except Exception as err:  # one line, not a traceback, when offline
            if not offline(err):
                raise
            fail(f"could not download the weights of {name} ({w}: {err}); copy {w.url} to {cached} "
                 f"(torch's hub cache), or pass --checkpoint FILE, or --no-weights to try the pipeline with random weights")
    strip_classifier(model, name)
    if checkpoint is not None:
        load_checkpoint(model, checkpoint)
    return model, pre


CLASSIFIER_KEYS = ("fc.", "heads.", "classifier.", "head.")


def strip_classifier(model, name):
    """Drops the classifier: ResNets/RegNets have .fc, ViTs .heads,
    ConvNeXt/EfficientNet/VGG .classifier (its flatten/norm layers kept)."""
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
        fail(f"do not know how to remove the classifier of {name}")


def load_checkpoint(model, path):
    """Loads a local state_dict (torch.save(model.state_dict(), path), or a
    training checkpoint holding one under "state_dict" or "model")."""
    try:
        sd = torch.load(path, map_location="cpu")
    except (OSError, RuntimeError) as err:
        fail(f"--checkpoint {path}: {err}")
    for key in ("state_dict", "model", "model_state_dict"):
        if isinstance(sd, dict) and isinstance(sd.get(key), dict):
            sd = sd[key]
    if not isinstance(sd, dict):
        fail(f"--checkpoint {path}: expected a state_dict (a dict of tensors), found {type(sd).__name__}")
    sd = {k.removeprefix("module."): v for k, v in sd.items()}
    try:
        res = model.load_state_dict(sd, strict=False)
    except RuntimeError as err:  # shapes that differ
        detail = " ".join(l.strip() for l in str(err).splitlines()[1:3])
        fail(f"--checkpoint {path} does not fit the model: {detail}")
    extra = [k for k in res.unexpected_keys if not k.startswith(CLASSIFIER_KEYS)]
    if res.missing_keys or extra:
        fail(f"--checkpoint {path} does not fit the model: missing {res.missing_keys[:3]}, unexpected {extra[:3]}")


def timm_encoder(name, pretrained, checkpoint):
    try:
        import timm
        import timm.data
    except ImportError:
        fail("timm is not in Debian: pip install timm (e.g. python3 -m venv --system-site-packages ~/.venv-timm "
             "&& ~/.venv-timm/bin/pip install timm, then run this script with ~/.venv-timm/bin/python), or use torchvision:NAME")
    kw = {}
    if checkpoint is not None:
        kw["pretrained_cfg_overlay"] = {"file": os.path.abspath(checkpoint)}
    try:
        model = timm.create_model(name, pretrained=pretrained or checkpoint is not None, num_classes=0, **kw)  # pooled features
    except Exception as err:
        if not offline(err):
            raise
        fail(f"could not download the weights of {name} ({type(err).__name__}); with files already downloaded "
             f"set HF_HUB_OFFLINE=1 to use the Hugging Face cache, or pass --checkpoint FILE, or --no-weights to try the pipeline")
    cfg = timm.data.resolve_data_config({}, model=model)
    size = cfg["input_size"][1]
    pre = {"height": cfg["input_size"][1], "width": cfg["input_size"][2],
           "resize_size": int(math.floor(size / cfg["crop_pct"])),
           "mean": list(cfg["mean"]), "std": list(cfg["std"]), "resize": cfg["interpolation"]}
    return model, pre


def export(model, x, out, opset):
    """Writes the ONNX file in one piece, batch axis dynamic, with the
    current exporter where torch has it (torch.export-based, dynamo=True,
    opset 18 or later, dynamic_shapes), else the TorchScript one
    (dynamic_axes). Returns the opset written."""
    params = inspect.signature(torch.onnx.export).parameters
    names = dict(input_names=["pixel_values"], output_names=["features"])
    if "dynamo" in params and (opset is None or opset >= 18):
        opset = opset or 18
        kw = dict(dynamo=True, dynamic_shapes=({0: torch.export.Dim("batch")},), opset_version=opset)
        if "external_data" in params:
            kw["external_data"] = False  # one file: dpfeat hashes it, and export-onnx fuses it
        torch.onnx.export(model, (x,), out, **names, **kw)
        return opset
    opset = opset or 17
    kw = {"dynamo": False} if "dynamo" in params else {}
    torch.onnx.export(model, x, out, dynamic_axes={"pixel_values": {0: "batch"}, "features": {0: "batch"}},
                      opset_version=opset, **names, **kw)
    return opset


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="torchvision:NAME or timm:NAME")
    ap.add_argument("-o", "--out", required=True, help="ONNX file to write (the manifest goes beside it)")
    ap.add_argument("--weights", help="torchvision weights enum name, e.g. IMAGENET1K_V2 (default: DEFAULT)")
    ap.add_argument("--checkpoint", help="local weights: a state_dict file (torchvision), or timm's weight file")
    ap.add_argument("--no-weights", action="store_true", help="random initialisation (to try the pipeline offline)")
    ap.add_argument("--opset", type=int, help="ONNX opset (default: 18 with torch's current exporter, 17 with the older one)")
    ap.add_argument("--force", action="store_true", help="replace --out and its manifest")
    args = ap.parse_args()
    kind, _, name = args.model.partition(":")
    if args.no_weights and (args.weights or args.checkpoint):
        fail("--no-weights and --weights/--checkpoint contradict each other")
    manifest_path = os.path.splitext(args.out)[0] + ".json"
    for p in (args.out, manifest_path):
        if os.path.exists(p) and not args.force:
            fail(f"{p} exists: pass --force to replace it")
    if kind == "torchvision":
        weights = None if args.no_weights else (args.weights or ("DEFAULT" if not args.checkpoint else None))
        model, pre = torchvision_encoder(name, weights, args.checkpoint)
    elif kind == "timm":
        model, pre = timm_encoder(name, not args.no_weights, args.checkpoint)
    else:
        fail(f"model {args.model!r}: expected torchvision:NAME (e.g. torchvision:resnet50) or timm:NAME")
    model.eval()
    x = torch.zeros(2, 3, pre["height"], pre["width"])
    with torch.no_grad():
        dim = model(x).shape[-1]
    tmp = args.out + ".partial"
    opset = export(model, x, tmp, args.opset)
    with open(tmp, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    source = args.model + (" (random weights)" if args.no_weights else f" ({args.checkpoint})" if args.checkpoint else "")
    manifest = {
        "name": name, "file": os.path.basename(args.out), "sha256": sha,
        "input": {"name": "pixel_values", "layout": "NCHW", "channels": 3, "height": pre["height"], "width": pre["width"],
                  "mean": pre["mean"], "std": pre["std"], "resize": pre["resize"], "crop": "center",
                  "resize_size": pre["resize_size"], "round_after_resize": True},
        "output": {"name": "features", "dim": int(dim), "pool": "none"},
        "source": source,
    }
    with open(manifest_path + ".partial", "w") as f:
        json.dump(manifest, f, indent=2)
    os.replace(tmp, args.out)
    os.replace(manifest_path + ".partial", manifest_path)
    print(f"wrote {args.out} (D = {dim}, opset {opset}) and {manifest_path}")


if __name__ == "__main__":
    main()
