#!/usr/bin/env bash
# A by-hand check of `dpfeat export` outside Go, with what Debian offers
# (python3-pandas, python3-nbformat, python3-matplotlib; pyarrow is not in
# Debian): exports RESULTS.arrow to CSV, JSON and a notebook, reads the CSV
# and JSON with pandas without options, validates the notebook against
# nbformat's schema, and runs the notebook's code cells on the rows (loaded
# from the CSV, as pyarrow is missing), saving its figures.
# Usage: scripts/check-exports.sh RESULTS.arrow
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 RESULTS.arrow" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bin=${DPFEAT:-bin/dpfeat}
for f in csv json ipynb; do "$bin" export --results "$1" --format "$f" --out "$tmp/r.$f" 2>/dev/null; done
MPLBACKEND=Agg /usr/bin/python3 - "$tmp" <<'PY'
import json, math, sys
import nbformat
import pandas as pd
d = sys.argv[1]
csv = pd.read_csv(f"{d}/r.csv")
js = pd.read_json(f"{d}/r.json")
print(f"pandas {pd.__version__}: CSV {csv.shape}, JSON {js.shape}")
assert csv.shape == js.shape, (csv.shape, js.shape)
assert csv["epsilon"].dtype == float and js["epsilon"].dtype == float
assert (csv["epsilon"] == math.inf).sum() == js["epsilon"].isna().sum()
nb = nbformat.read(f"{d}/r.ipynb", as_version=4)
nbformat.validate(nb)
print(f"nbformat {nbformat.__version__}: the notebook validates ({len(nb.cells)} cells)")
# Run the code cells, with the CSV in place of the Arrow load.
import matplotlib.pyplot as plt
plt.show = lambda: None
ns = {}
for cell in nb.cells:
    if cell.cell_type != "code":
        continue
    src = cell.source
    if "ipc.open_file" in src:
        src = "import math\nimport matplotlib.pyplot as plt\nimport pandas as pd\n" + f"df = pd.read_csv({d + '/r.csv'!r}, keep_default_na=False, na_values=[''])\n"
    exec(compile(src, cell.id, "exec"), ns)
s = ns["summary"]
print(f"the notebook's summary: {len(s)} lines, {len(plt.get_fignums())} figures")
print(s[["dataset", "method", "epsilon", "group", "val", "test"]].head(8).to_string())
PY
