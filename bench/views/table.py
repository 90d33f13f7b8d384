"""Prints bench/views.sh's table: median test accuracy (range) per dataset,
method and ε, one column per view variant, and the median seconds per fit.
Reads the sweep's rows through `dpfeat export --format csv`."""
import csv
import statistics
import subprocess
import sys
import tempfile

res, variants = sys.argv[1], sys.argv[2].split()
with tempfile.NamedTemporaryFile(suffix=".csv") as f:
    subprocess.run(["bin/dpfeat", "export", "--results", res, "--format", "csv", "--out", f.name, "--force"],
                   check=True, stderr=subprocess.DEVNULL)
    rows = list(csv.DictReader(open(f.name)))
acc, secs = {}, {}
for r in rows:
    if r["error"]:
        continue
    s, v = r["dataset"].split("-", 1)
    key = (s, r["method"], float(r["epsilon"]), v)
    acc.setdefault(key, []).append(float(r["test_accuracy"]))
    secs.setdefault((r["method"], v), []).append(float(r["seconds"]))
sets = sorted({k[0] for k in acc}, key=lambda s: s != "fmnist")
methods = sorted({k[1] for k in acc})
eps = sorted({k[2] for k in acc})
for s in sets:
    print(f"**{s}**" + (" (in distribution)" if s == "fmnist" else " (shifted: inverted images)"))
    print()
    print("| method | ε | " + " | ".join(variants) + " | best views − plain |")
    print("|---|---|" + "---|" * len(variants) + "---|")
    for m in methods:
        for e in eps:
            cells, meds = [], {}
            for v in variants:
                a = acc.get((s, m, e, v))
                if not a:
                    cells.append("-")
                    continue
                meds[v] = statistics.median(a)
                cells.append(f"{meds[v]:.4f} [{min(a):.3f}, {max(a):.3f}]")
            aug = [a for v, a in meds.items() if v != "plain"]
            best = max(aug) - meds.get("plain", float("nan")) if aug else float("nan")
            print(f"| {m} | {e:g} | " + " | ".join(cells) + f" | {best:+.4f} |")
    print()
print("Median seconds per fit (both sets, every ε):")
print()
print("| method | " + " | ".join(variants) + " |")
print("|---|" + "---|" * len(variants))
for m in methods:
    print(f"| {m} | " + " | ".join(f"{statistics.median(secs[(m, v)]):.2f}" if (m, v) in secs else "-" for v in variants) + " |")
