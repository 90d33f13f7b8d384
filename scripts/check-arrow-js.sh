#!/usr/bin/env bash
# Reads feature files with an independent Arrow implementation (Apache Arrow's
# JavaScript library from npm) and prints their schema, metadata and first
# rows: a by-hand check that what dpfeat writes opens outside Go, where
# pyarrow is not at hand. Usage: scripts/check-arrow-js.sh FILE.arrow…
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 FILE.arrow…" >&2; exit 1; }
dir="${TMPDIR:-/tmp}/dpfeat-arrow-js"
if [ ! -d "$dir/node_modules/apache-arrow" ]; then
	mkdir -p "$dir"
	(cd "$dir" && npm init -y >/dev/null && npm install --silent apache-arrow >/dev/null)
fi
cat >"$dir/check.mjs" <<'JS'
import { readFileSync } from 'fs';
import { tableFromIPC } from 'apache-arrow';
for (const path of process.argv.slice(2)) {
  const t = tableFromIPC(readFileSync(path));
  console.log(`${path}: ${t.numRows} rows`);
  for (const f of t.schema.fields) console.log(`  ${f.name}: ${f.type} nullable=${f.nullable}`);
  for (const [k, v] of t.schema.metadata) console.log(`  ${k} = ${v}`);
  let i = 0;
  for (const row of t) {
    if (i++ >= 3) break;
    console.log('  ' + JSON.stringify({ features: Array.from(row.features).slice(0, 8), label: row.label, id: row.id ?? null }));
  }
}
JS
files=()
for f in "$@"; do files+=("$(readlink -f "$f")"); done
cd "$dir" && node check.mjs "${files[@]}"
