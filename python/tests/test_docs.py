"""Every sh block in docs/*.md runs as written, in order, in a fresh folder
per document holding what the commands start from (fixtures.py). Lines
that run make targets are left out: CI runs `make test`, and the others
(make audit, make bench) are benchmarks run by hand."""

import glob
import os
import re
import subprocess
import sys
import tempfile
import unittest

from fixtures import FMNIST, ROOT, fixture, shell_env


def sh_blocks(path):
    """The document's sh and python blocks, in order, as (language, code)."""
    with open(path) as f:
        text = f.read()
    return re.findall(r"```(sh|python)\n(.*?)```", text, re.S)


class DocsTest(unittest.TestCase):
    def test_every_block_runs(self):
        docs = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
        self.assertGreater(len(docs), 3)
        if not os.path.isdir(FMNIST):
            self.skipTest("the documents' examples read Fashion-MNIST (%s; scripts/setup.sh installs it)" % FMNIST)
        ran = 0
        for doc in docs:
            blocks = sh_blocks(doc)
            if not blocks:
                continue
            with self.subTest(doc=os.path.basename(doc)), tempfile.TemporaryDirectory() as tmp:
                fixture(tmp, features=True)
                for lang, code in blocks:
                    code = "\n".join(l for l in code.splitlines() if not l.lstrip().startswith("make "))
                    cmd = ["bash", "-euo", "pipefail", "-c", code] if lang == "sh" else [sys.executable, "-c", code]
                    # (the job server's PROCESS workers cache their binary
                    # under XDG_CACHE_HOME: the folder's, not the user's)
                    env = dict(shell_env(tmp), XDG_CACHE_HOME=os.path.join(tmp, "cache"))
                    proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)
                    self.assertEqual(proc.returncode, 0, "%s block:\n%s\n--- stdout\n%s\n--- stderr\n%s" % (os.path.basename(doc), code, proc.stdout[-2000:], proc.stderr[-3000:]))
                    ran += 1
        self.assertGreater(ran, 5)


if __name__ == "__main__":
    unittest.main()
