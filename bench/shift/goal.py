#!/usr/bin/env python3
"""Issue 41's goal table: auto and auto@public before and after, per cell.

goal.py BEFORE.md AFTER.md reads two outputs of bench/shift/run (the
per-set tables "### SET, n = N …" with a "| configuration | ε = E | …"
header): BEFORE has auto and auto@public from the commit before the
issue's work, AFTER the methods with their defaults, auto, auto@public and
ls from now, same seeds and rows. It prints, per set, n and ε, the goal's
target (best default + goal × (ls − best default), goal 80% at ε = 8 and
50% below), each of auto and auto@public before and after with the share
of the gap they recover, and whether the target is met; then the counts
over the shifted sets (the proxies: every set but fmnist-*). Cells of AFTER
without the default methods are the no-loss check: auto and auto@public
before and after, and their change in points.
"""
import re
import sys

DEFAULTS = ("dpls", "dpfc", "dpnewton", "dpsgd", "dplp", "dpplmean")


def parse(path):
    """{(set, n, eps): {configuration: accuracy}} in the order read."""
    cells, set_, n, eps = {}, None, None, []
    for line in open(path, encoding="utf-8"):
        m = re.match(r"### (\S+), n = (\d+) ", line)
        if m:
            set_, n, eps = m.group(1), int(m.group(2)), []
            continue
        if set_ is None or not line.startswith("| "):
            continue
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if cols[0] == "configuration":
            eps = [c.removeprefix("ε = ") for c in cols[1:]]
            continue
        if cols[0].startswith("---") or not eps:
            continue
        name = cols[0].removesuffix(" (non-private)")
        for e, v in zip(eps, cols[1:]):
            try:
                cells.setdefault((set_, n, e), {})[name] = float(v)
            except ValueError:
                pass
    return cells


def main():
    before, after = parse(sys.argv[1]), parse(sys.argv[2])
    print("| features | n | ε | goal | target | auto before | auto after | gap before → after "
          "| auto@public before | auto@public after | gap before → after | met (auto, @public) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    met, rest = {}, []
    for key, a in after.items():
        set_, n, e = key
        b = before.get(key, {})
        defaults = [(a[d], d) for d in DEFAULTS if d in a]
        if not defaults or "ls" not in a:
            rest.append((key, b, a))
            continue
        best, _ = max(defaults)
        goal = 0.8 if float(e) >= 8 else 0.5
        span = a["ls"] - best
        target = best + goal * span if span > 0 else None

        def fmt(v):
            return "—" if v is None else f"{v:.4f}"

        def gap(v):
            return "—" if v is None or span <= 0 else f"{100 * (v - best) / span:.0f}%"

        row = [set_, str(n), e, f"{goal:.0%}", fmt(target)]
        flags = []
        for c in ("auto", "auto@public"):
            vb, va = b.get(c), a.get(c)
            row += [fmt(vb), fmt(va), f"{gap(vb)} → {gap(va)}"]
            if va is None:
                flags.append("—")
                continue
            ok = target is None or va >= target
            flags.append("yes" if ok else f"{100 * (va - target):+.1f}")
            if not set_.startswith("fmnist-"):  # in distribution: no proxy
                band = met.setdefault(("≈ 600" if n < 2000 else "≈ 6,000", e, c), [0, 0])
                band[0] += ok
                band[1] += 1
        row.append(", ".join(flags))
        print("| " + " | ".join(row) + " |")
    print()
    print("Shifted cells that meet the target (a cell whose ls is not above the best default counts as met; short: points below it):")
    print()
    print("| n | ε | configuration | met |")
    print("|---|---|---|---|")
    for (nb, e, c), (ok, total) in met.items():
        print(f"| {nb} | {e} | {c} | {ok} of {total} |")
    if not rest:
        return
    print()
    print("No loss: auto and auto@public before and after where there is no target; change in points, ≤ −0.3 marked.")
    print()
    print("| features | n | ε | auto before | auto after | change | auto@public before | auto@public after | change |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (set_, n, e), b, a in rest:
        row = [set_, str(n), e]
        for c in ("auto", "auto@public"):
            vb, va = b.get(c), a.get(c)
            if vb is None or va is None:
                row += ["—", "—", "—"]
                continue
            d = 100 * (va - vb)
            row += [f"{vb:.4f}", f"{va:.4f}", f"{d:+.2f}" + (" (loss)" if d <= -0.3 else "")]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
