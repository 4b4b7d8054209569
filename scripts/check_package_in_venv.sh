#!/usr/bin/env bash
# Check that a `spacy package` archive of a greenkd pipeline installs and loads in a
# fresh virtualenv. Usage: bash scripts/check_package_in_venv.sh PACKAGE.tar.gz MODULE_NAME
set -euo pipefail
archive=$1
name=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=$(mktemp -d)/venv
python -m venv "$venv"
"$venv/bin/pip" install -q torch==2.13.0          # CPU wheel before anything asks for torch
"$venv/bin/pip" install -q "$repo"               # greenkd-spacy (not on PyPI yet)
"$venv/bin/pip" install -q "$archive"
cd "$(dirname "$venv")"
"$venv/bin/python" - "$name" <<'PY'
import sys
import spacy
nlp = spacy.load(sys.argv[1])
doc = nlp("I like green eggs . She ate the pizza .")
print([(t.text, t.dep_, t.head.i) for t in doc])
assert all(t.dep_ for t in doc)
print("OK: loaded", sys.argv[1], "with", nlp.pipe_names)
PY
