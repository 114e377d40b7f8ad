#!/usr/bin/env bash
# The smoke and the book builds never take each other's pages (issue 38, ch/maketest7): a two-page project
# with explorables.sphinx_ext, built at smoke, book, smoke, book into the same output and execution cache.
# Each page must show the scale of the build, and each scale must execute once (then come from its own cache
# record); EXPLORABLES_BOOK_SCALE=paper must be refused. Run from the repository root: bash benchmarks/maketest7_scale_switch.sh
set -euo pipefail
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/book"
cat > "$work/src/conf.py" <<CONF
extensions = ["myst_nb", "explorables.sphinx_ext"]
nb_execution_mode = "cache"
nb_execution_raise_on_error = True
exclude_patterns = ["_build"]
html_static_path = ["$root/book/_static"]
CONF
printf '# Index\n\n```{toctree}\nbook/01-toy\nbook/02-toy\n```\n' > "$work/src/index.md"
for n in 01 02; do
  cat > "$work/src/book/$n-toy.md" <<'PAGE'
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
# Toy

```{code-cell} ipython3
:tags: [parameters]

SCALE = "book"
```

```{code-cell} ipython3
import os
with open(os.environ["RUNS_LOG"], "a") as log:
    log.write(SCALE + "\n")
print("executed at", SCALE)
```
PAGE
done
export PYTHONPATH="$root/src" RUNS_LOG="$work/runs.log"
for scale in smoke book smoke book; do
  EXPLORABLES_BOOK_SCALE=$scale "$root/.venv/bin/python" -m sphinx -b html -q "$work/src" "$work/src/_build/html" 2>&1 \
    | grep -v "TCP without" || true
  shown="$(grep -ho 'executed at [a-z]*' "$work"/src/_build/html/book/0[12]-toy.html | sort -u | tr '\n' ' ')"
  echo "$scale build: pages show '$shown'; kernels so far: $(tr '\n' ' ' < "$RUNS_LOG")"
  [ "$shown" = "executed at $scale " ] || { echo "FAIL: the $scale build shows $shown"; exit 1; }
done
[ "$(tr '\n' ' ' < "$RUNS_LOG")" = "smoke smoke book book " ] || { echo "FAIL: a scale executed twice or not at all"; exit 1; }
if EXPLORABLES_BOOK_SCALE=paper "$root/.venv/bin/python" -m sphinx -b html -q "$work/src" "$work/src/_build/html" 2>/dev/null; then
  echo "FAIL: EXPLORABLES_BOOK_SCALE=paper was accepted"; exit 1
fi
echo "OK: each build shows its own scale, each scale executed once, paper refused"
