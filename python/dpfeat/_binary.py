"""Finding and running the dpfeat binary."""

import json
import os
import shutil
import subprocess


class DpfeatError(RuntimeError):
    """dpfeat refused or failed; the message is its one-line explanation."""


def binary():
    """The dpfeat binary: $DPFEAT_BIN, dpfeat on PATH, or the repository's
    bin/dpfeat beside this package."""
    env = os.environ.get("DPFEAT_BIN")
    if env:
        return os.path.abspath(env) if os.sep in env else env
    found = shutil.which("dpfeat")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.join(here, "..", "..", "bin", "dpfeat")
    if os.path.exists(repo):
        return os.path.normpath(repo)
    raise DpfeatError("the dpfeat binary was not found: set DPFEAT_BIN, put dpfeat on PATH, or run `make build` in the repository")


def run(*args, json_output=False):
    """Runs ``dpfeat ARGS…``; returns its stdout (parsed when json_output)
    and raises DpfeatError with dpfeat's message when it fails."""
    cmd = [binary()] + [str(a) for a in args]
    if json_output:
        cmd.append("--json")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        msg = proc.stderr.strip().splitlines()
        raise DpfeatError(msg[-1] if msg else "dpfeat %s exited with %d" % (args[0], proc.returncode))
    return json.loads(proc.stdout) if json_output else proc.stdout
