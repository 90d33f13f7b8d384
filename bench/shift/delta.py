#!/usr/bin/env python3
"""Mean change of one configuration against another, per n and ε.

delta.py FILE.md A B [HELDOUT,...] reads bench/shift/run's per-set tables
(goal.parse) and prints, per n band (the tables' n, rounded: ≈ 600,
≈ 2,000, …) and ε, the mean accuracy of A and of B over the sets, B − A in
points, how many sets rose or fell by more than 0.3 and the worst; sets
whose name starts with one of HELDOUT (comma-separated) apart.
"""
import sys

from goal import parse


def band(n):
    return min((600, 2000, 6000, 30000), key=lambda b: abs(n - b))


def main():
    cells = parse(sys.argv[1])
    a, b = sys.argv[2], sys.argv[3]
    held = tuple(sys.argv[4].split(",")) if len(sys.argv) > 4 and sys.argv[4] else ()
    groups = {}
    for (set_, n, e), row in cells.items():
        if a in row and b in row:
            kind = "held-out" if held and set_.startswith(held) else "sets"
            groups.setdefault((band(n), float(e), kind), []).append((set_, row[a], row[b]))
    print(f"| n | ε | sets | {a} | {b} | change (points) | up > 0.3 | down > 0.3 | worst |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (n, e, kind), rows in sorted(groups.items(), key=lambda g: (g[0][0], g[0][1], g[0][2] != "sets")):
        d = [(100 * (y - x), s) for s, x, y in rows]
        worst = min(d)
        print(f"| ≈ {n:,} | {e:g} | {len(rows)} {kind} | {sum(x for _, x, _ in rows) / len(rows):.4f} | "
              f"{sum(y for _, _, y in rows) / len(rows):.4f} | {sum(x for x, _ in d) / len(d):+.2f} | "
              f"{sum(x > 0.3 for x, _ in d)} | {sum(x < -0.3 for x, _ in d)} | {worst[0]:+.2f} ({worst[1]}) |")


if __name__ == "__main__":
    main()
