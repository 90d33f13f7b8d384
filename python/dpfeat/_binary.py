"""Finding and running the dpfeat binary."""

import json
import os
import shutil
import subprocess


class DpfeatError(RuntimeError):
    """dpfeat refused or failed; the message is its one-line explanation."""


class DpfeatWarning(UserWarning):
    """A warning or note dpfeat printed (``fit --json``'s ``warnings``): a
    δ not below 1/n, a class list read from the labels, a budget spent, …"""


def binary():
    """The dpfeat binary: $DPFEAT_BIN, the one the wheel carries
    (dpfeat/_bin, with the ONNX Runtime library it loads), dpfeat on PATH,
    or the repository's bin/dpfeat beside this package."""
    env = os.environ.get("DPFEAT_BIN")
    if env:
        return os.path.abspath(env) if os.sep in env else env
    here = os.path.dirname(os.path.abspath(__file__))
    packaged = os.path.join(here, "_bin", "dpfeat")
    if os.access(packaged, os.X_OK):
        return packaged
    found = shutil.which("dpfeat")
    if found:
        return found
    repo = os.path.join(here, "..", "..", "bin", "dpfeat")
    if os.path.exists(repo):
        return os.path.normpath(repo)
    raise DpfeatError("the dpfeat binary was not found: set DPFEAT_BIN, put dpfeat on PATH, or run `make build` in the repository")


def rename(text, names):
    """text with each temporary path of names replaced by what it holds."""
    for path, name in (names or {}).items():
        text = text.replace(path, name)
    return text


def run(*args, json_output=False, names=None):
    """Runs ``dpfeat ARGS…``; returns its stdout (parsed when json_output)
    and raises DpfeatError with dpfeat's message when it fails. ``names``
    maps the temporary files the caller made to what they hold for the
    user ("X and y"): a message names those, never a temporary path."""
    cmd = [binary()] + [str(a) for a in args]
    if json_output:
        cmd.append("--json")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        msg = proc.stderr.strip().splitlines()
        text = msg[-1] if msg else "dpfeat %s exited with %d" % (args[0], proc.returncode)
        raise DpfeatError(rename(text, names))
    return json.loads(proc.stdout) if json_output else proc.stdout


def classes_args(classes, folder):
    """``--classes @FILE`` for a class list, the file written in folder:
    one name per line, so that names may hold commas."""
    names = [str(c) for c in classes]
    for c in names:
        if "\n" in c or "\r" in c or c != c.strip() or not c:
            raise ValueError("class name %r: a class name is not empty and has no line breaks or surrounding spaces" % c)
    path = os.path.join(folder, "classes.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(names) + "\n")
    return ["--classes", "@" + path]
