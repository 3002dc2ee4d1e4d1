#!/usr/bin/env bash
# After the README's first command only (pip install ".[cli]"): vpoc inspect and vpoc profile read
# CSV, Parquet and the legacy 'YYYYMMDD HHMMSS;o;h;l;c;v' text with CME (Globex) sessions.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && python - <<'PY'
import vpoc
bars = vpoc.synth.es_bars(n_sessions=5, bars_per_session=1380, seed=0)
vpoc.io.write_bars(bars, "es.csv")
vpoc.io.write_bars(bars, "es.parquet")
vpoc.io.write_bars(bars, "es.txt", tz="UTC")  # legacy text: UTC wall clock
PY
)
for f in es.csv es.parquet es.txt; do
  extra=()
  [ "$f" = es.txt ] && extra=(--tz UTC)
  vpoc inspect "$dir/$f" "${extra[@]}" | tail -n 2
  vpoc profile "$dir/$f" "${extra[@]}" --tick-size 0.25 --strict --out "$dir/$f.profile.csv"
  rows=$(($(wc -l < "$dir/$f.profile.csv") - 1))
  echo "$f: $rows sessions"
  [ "$rows" -eq 5 ]
done
