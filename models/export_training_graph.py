#!/usr/bin/python3
"""Export a PyTorch classifier as a dpfeat *training graph*: an ordinary ONNX
model whose inputs are the trainable parameters (by name), a batch of images
(`images`) and labels (`labels`, int64), and whose outputs are, for every
parameter P, the per-example gradient `grad.P` (a leading batch axis, then
P's shape) of the cross-entropy, and the per-example loss `loss` [B].
dpfeat drives DP-SGD itself (clipping, noise, the optimizer) and feeds the
updated parameters back as inputs every step: ONNX Runtime's training API
is not needed.

ONNX export cannot trace autograd or torch.func transforms (PyTorch 1.13), so
the backward pass is written out with ordinary tensor operations for
nn.Sequential models built from Linear, Conv2d, ReLU, Tanh and Flatten; per-example weight gradients are outer products (Linear) or
unfold products (Conv2d). The exported graph is checked against per-example
gradients computed by autograd (functorch/torch.func vmap over grad when
available, else one backward pass per example) before it is written.

    /usr/bin/python3 models/export_training_graph.py --demo mlp --out OUT.onnx
    # or, from Python:
    from export_training_graph import export
    export(model, example_images, "train.onnx", params_out="init.safetensors")

Needs python3-torch (and python3-onnx to check the file); not needed by CI.
"""
import argparse
import json
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

SUPPORTED = (nn.Linear, nn.Conv2d, nn.ReLU, nn.Tanh, nn.Flatten)


def _apply(layer, i, params, h):
    """Layer i of the Sequential on h, with the parameters given as inputs."""
    if isinstance(layer, nn.Linear):
        out = h @ params[f"{i}.weight"].t()
        return out + params[f"{i}.bias"] if layer.bias is not None else out
    if isinstance(layer, nn.Conv2d):
        return F.conv2d(h, params[f"{i}.weight"], params.get(f"{i}.bias"), layer.stride, layer.padding)
    if isinstance(layer, nn.ReLU):
        return torch.relu(h)
    if isinstance(layer, nn.Tanh):
        return torch.tanh(h)
    return h.reshape(h.shape[0], -1)  # Flatten


def _backward(layers, params, acts, d, per_example=True):
    """Back-propagates d = dloss/d(output), row by row, through the layers
    (acts: their inputs, then the output): each parameter's gradient per
    example (a leading batch axis), or summed over the batch (a
    vector-Jacobian product)."""
    grads = {}
    for i in range(len(layers) - 1, -1, -1):
        layer, h, out = layers[i], acts[i], acts[i + 1]
        if isinstance(layer, nn.Linear):
            w = params[f"{i}.weight"]
            if per_example:
                grads[f"{i}.weight"] = d.unsqueeze(2) * h.unsqueeze(1)
            else:
                grads[f"{i}.weight"] = d.t() @ h
            if layer.bias is not None:
                grads[f"{i}.bias"] = d if per_example else d.sum(dim=0)
            d = d @ w
        elif isinstance(layer, nn.Conv2d):
            w = params[f"{i}.weight"]
            b, co = d.shape[0], d.shape[1]
            cols = F.unfold(h, layer.kernel_size, padding=layer.padding, stride=layer.stride)  # [B, Ci·k·k, L]
            dflat = d.reshape(b, co, -1)  # [B, Co, L]
            if per_example:
                grads[f"{i}.weight"] = torch.bmm(dflat, cols.transpose(1, 2)).reshape((b,) + tuple(w.shape))
            else:  # one product over every example's positions
                k = cols.shape[1]
                whole = dflat.permute(1, 0, 2).reshape(co, -1) @ cols.permute(0, 2, 1).reshape(-1, k)
                grads[f"{i}.weight"] = whole.reshape(w.shape)
            if layer.bias is not None:
                grads[f"{i}.bias"] = dflat.sum(dim=2) if per_example else dflat.sum(dim=(0, 2))
            # The input's gradient is the transposed convolution; input
            # rows and columns the strided convolution never read (at
            # the bottom and right) get zeros. (Padding explicitly rather
            # than with output_padding: ONNX Runtime's ConvTranspose
            # disagrees with PyTorch's there.)
            (sh, sw), (ph, pw), (kh, kw) = layer.stride, layer.padding, layer.kernel_size
            oph = h.shape[2] - ((out.shape[2] - 1) * sh - 2 * ph + kh)
            opw = h.shape[3] - ((out.shape[3] - 1) * sw - 2 * pw + kw)
            d = F.conv_transpose2d(d, w, stride=layer.stride, padding=layer.padding)
            if oph or opw:
                d = F.pad(d, (0, opw, 0, oph))
        elif isinstance(layer, nn.ReLU):
            d = d * (h > 0).to(d.dtype)
        elif isinstance(layer, nn.Tanh):
            d = d * (1 - out * out)
        else:  # Flatten
            d = d.reshape(h.shape)
    return grads


class _PerExample(nn.Module):
    """forward(*params, images, labels) -> (*per-example grads, loss)."""

    def __init__(self, model, names):
        super().__init__()
        self.layers = list(model)
        self.names = names

    def forward(self, *args):
        params = dict(zip(self.names, args[: len(self.names)]))
        x, y = args[len(self.names) :]
        acts = [x]
        for i, layer in enumerate(self.layers):
            acts.append(_apply(layer, i, params, acts[-1]))
        z = acts[-1]
        m = z.shape[1]
        onehot = (torch.arange(m).unsqueeze(0) == y.unsqueeze(1)).to(z.dtype)
        logp = torch.log_softmax(z, dim=1)
        loss = -(logp * onehot).sum(dim=1)
        d = torch.softmax(z, dim=1) - onehot  # dloss_i/dz_i, row by row
        grads = _backward(self.layers, params, acts, d)
        return tuple(grads[n] for n in self.names) + (loss,)


class _Forward(nn.Module):
    """forward(*params, images) -> the model's output (logits; for the first
    layers alone, the embeddings), the parameters as inputs."""

    def __init__(self, model, names):
        super().__init__()
        self.layers = list(model)
        self.names = names

    def forward(self, *args):
        params = dict(zip(self.names, args[: len(self.names)]))
        h = args[len(self.names)]
        for i, layer in enumerate(self.layers):
            h = _apply(layer, i, params, h)
        return h


class _VJP(nn.Module):
    """forward(*params, images, grad_embeddings) -> the gradient of
    Σ_i grad_embeddings_i · embeddings_i with respect to every parameter:
    the vector-Jacobian product that turns a loss's gradient with respect
    to the embeddings (computed outside, e.g. a contrastive loss coupling
    the batch) into the parameters' gradient."""

    def __init__(self, layers, names):
        super().__init__()
        self.layers = layers
        self.names = names

    def forward(self, *args):
        params = dict(zip(self.names, args[: len(self.names)]))
        x, g = args[len(self.names) :]
        acts = [x]
        for i, layer in enumerate(self.layers):
            acts.append(_apply(layer, i, params, acts[-1]))
        grads = _backward(self.layers, params, acts, g, per_example=False)
        return tuple(grads[n] for n in self.names)


def export_pretrain(model, layers, images, vjp_out, embed_out, opset=14, atol=1e-5):
    """Export the first `layers` modules of model (its feature extractor) as
    the two pretraining graphs dpfeat pretrain drives: embed_out (the
    parameters and `images` in, `embeddings` [batch, E] out) and vjp_out
    (the parameters, `images` and `grad_embeddings` [batch, E] in, for each
    parameter P `grad.P` of P's shape out: the gradient of
    Σ grad_embeddings·embeddings). Both are checked against autograd on
    images before they are written. Parameter names are the model's, so
    the pretrained values slot into the whole model's training graph."""
    if not isinstance(model, nn.Sequential) or not all(isinstance(l, SUPPORTED) for l in model):
        raise ValueError("export supports nn.Sequential of " + ", ".join(c.__name__ for c in SUPPORTED))
    body = nn.Sequential(*list(model)[:layers]).eval()
    names = [n for n, _ in body.named_parameters()]
    params = [p.detach() for _, p in body.named_parameters()]
    if not names:
        raise ValueError(f"the first {layers} layers have no parameters")
    embed, vjp = _Forward(body, names), _VJP(list(body), names)
    with torch.no_grad():
        e = embed(*params, images)
    if not torch.allclose(e, body(images), atol=atol):
        raise AssertionError("the embedding graph differs from the model")
    g = torch.randn_like(e)
    want = torch.autograd.grad((body(images) * g).sum(), list(body.parameters()))
    with torch.no_grad():
        got = vjp(*params, images, g)
    for n, a, b in zip(names, got, want):
        if not torch.allclose(a, b, atol=atol, rtol=1e-4):
            raise AssertionError(f"the vector-Jacobian product of {n} differs from autograd by {(a - b).abs().max():.3g}")
    torch.onnx.export(embed, (*params, images), embed_out, input_names=names + ["images"], output_names=["embeddings"],
                      dynamic_axes={"images": {0: "batch"}, "embeddings": {0: "batch"}}, opset_version=opset)
    torch.onnx.export(vjp, (*params, images, g), vjp_out, input_names=names + ["images", "grad_embeddings"],
                      output_names=["grad." + n for n in names],
                      dynamic_axes={"images": {0: "batch"}, "grad_embeddings": {0: "batch"}}, opset_version=opset)
    try:
        import onnx

        for path in (embed_out, vjp_out):
            onnx.checker.check_model(onnx.load(path))
    except ImportError:
        pass
    return names


def _reference(model, x, y):
    """Per-example gradients and losses by autograd, for the check."""
    names = [n for n, _ in model.named_parameters()]
    out = {n: [] for n in names}
    losses = []
    for i in range(x.shape[0]):
        model.zero_grad()
        loss = F.cross_entropy(model(x[i : i + 1]), y[i : i + 1])
        loss.backward()
        losses.append(loss.detach())
        for n, p in model.named_parameters():
            out[n].append(p.grad.detach().clone())
    return [torch.stack(out[n]) for n in names], torch.stack(losses)


def export(model, images, path, labels=None, params_out=None, forward_out=None, opset=14, atol=1e-5):
    """Export model as a training graph at path, checked on images (and
    labels, default random) against autograd; optionally write the initial
    parameters as safetensors to params_out, and the forward graph (the
    same parameters as inputs, images in, `logits` out) to forward_out,
    which dpfeat finetune --forward bakes the trained parameters into."""
    if not isinstance(model, nn.Sequential) or not all(isinstance(l, SUPPORTED) for l in model):
        raise ValueError("export supports nn.Sequential of " + ", ".join(c.__name__ for c in SUPPORTED))
    model = model.eval()
    names = [n for n, _ in model.named_parameters()]
    params = [p.detach() for _, p in model.named_parameters()]
    with torch.no_grad():
        m = model(images).shape[1]
    if labels is None:
        labels = torch.randint(0, m, (images.shape[0],))
    graph = _PerExample(model, names)
    with torch.no_grad():
        got = graph(*params, images, labels)
    want, want_loss = _reference(model, images, labels)
    for n, g, w in zip(names, got[:-1], want):
        if not torch.allclose(g, w, atol=atol, rtol=1e-4):
            raise AssertionError(f"per-example gradient of {n} differs from autograd by {(g - w).abs().max():.3g}")
    if not torch.allclose(got[-1], want_loss, atol=atol):
        raise AssertionError("per-example loss differs from autograd")
    dyn = {"images": {0: "batch"}, "labels": {0: "batch"}, "loss": {0: "batch"}}
    for n in names:
        dyn["grad." + n] = {0: "batch"}
    torch.onnx.export(graph, (*params, images, labels), path, input_names=names + ["images", "labels"],
                      output_names=["grad." + n for n in names] + ["loss"], dynamic_axes=dyn, opset_version=opset)
    try:
        import onnx

        onnx.checker.check_model(onnx.load(path))
    except ImportError:
        pass
    if params_out:
        write_safetensors(params_out, dict(zip(names, params)))
    if forward_out:
        fwd = _Forward(model, names)
        with torch.no_grad():
            if not torch.allclose(fwd(*params, images), model(images), atol=atol):
                raise AssertionError("the forward graph differs from the model")
        torch.onnx.export(fwd, (*params, images), forward_out, input_names=names + ["images"], output_names=["logits"],
                          dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}}, opset_version=opset)
    return names


def write_safetensors(path, tensors):
    """Plain safetensors (F32), readable by dpfeat and safetensors.numpy."""
    header, blobs, off = {}, [], 0
    for n, t in tensors.items():
        b = t.detach().float().contiguous().numpy().tobytes()
        header[n] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def demo_model(kind):
    """The test graphs: a 2-layer MLP on 1×4×2 'images' with 3 classes, or
    a small CNN (two convolutions, one padded, one strided) on 1×8×8 with 4
    classes."""
    if kind == "mlp":
        torch.manual_seed(0)
        return nn.Sequential(nn.Flatten(), nn.Linear(8, 6), nn.Tanh(), nn.Linear(6, 3)), (5, 1, 4, 2)
    torch.manual_seed(2)
    # Tanh, not ReLU: the Go tests compare with finite differences, which a
    # ReLU kink near a pre-activation spoils (ReLU is checked against
    # autograd at export time like every layer).
    cnn = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.Tanh(), nn.Conv2d(3, 2, 3, stride=2), nn.Tanh(), nn.Flatten(), nn.Linear(2 * 3 * 3, 4))
    return cnn, (6, 1, 8, 8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--demo", choices=["mlp", "cnn"], required=True, help="which test model to export (or call export() from Python)")
    ap.add_argument("--out", required=True, metavar="OUT.onnx")
    ap.add_argument("--params", metavar="OUT.safetensors", help="also write the initial parameters")
    ap.add_argument("--forward", metavar="OUT.onnx", help="also write the forward graph (parameters as inputs, logits out)")
    ap.add_argument("--pretrain-layers", type=int, metavar="K", help="also write the pretraining graphs of the first K layers (the feature extractor): --vjp and --embed")
    ap.add_argument("--vjp", metavar="OUT.onnx", help="with --pretrain-layers: the vector-Jacobian product graph")
    ap.add_argument("--embed", metavar="OUT.onnx", help="with --pretrain-layers: the embedding graph")
    a = ap.parse_args()
    model, shape = demo_model(a.demo)
    torch.manual_seed(1)
    images = torch.randn(*shape)
    names = export(model, images, a.out, params_out=a.params, forward_out=a.forward)
    print(f"wrote {a.out}: parameters {names}", file=sys.stderr)
    if a.pretrain_layers:
        if not (a.vjp and a.embed):
            ap.error("--pretrain-layers needs --vjp and --embed")
        body = export_pretrain(model, a.pretrain_layers, images, a.vjp, a.embed)
        print(f"wrote {a.vjp} and {a.embed}: parameters {body}", file=sys.stderr)


if __name__ == "__main__":
    main()
