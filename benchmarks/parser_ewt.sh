#!/usr/bin/env bash
# Benchmark the four EWT parsers of issue 2 in one run, on one CPU thread, EWT test,
# gold tokens and sentence boundaries; only full-goldpos gets gold UPOS (paper setting).
# Usage: bash benchmarks/parser_ewt.sh [BATCH_SIZE]   (run from the repository root,
# after `spacy project run ewt` trained the models). Writes benchmarks/results/parser_ewt.json.
set -euo pipefail
# The interpreter to run (scripts/sh.py sets it to the one that runs `spacy project`).
PYTHON=${PYTHON:-python}
batch=${1:-256}
out=benchmarks/results/parser_ewt.json
test=corpus/ud_en/en_ewt-ud-test.spacy
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
"$PYTHON" -m spacy greenkd-bench-parser training/full-goldpos-annealed/model-best "$test" --system full-goldpos --gold-pos -b "$batch" -o "$out"
"$PYTHON" -m spacy greenkd-bench-parser training/full-raw/model-best "$test" --system full-raw -b "$batch" -o "$out"
"$PYTHON" -m spacy greenkd-bench-parser training/cnn-raw/model-best "$test" --system cnn-raw -b "$batch" -o "$out"
"$PYTHON" -m spacy greenkd-bench-parser training/spacy-cnn/model-best "$test" --system spacy-cnn -b "$batch" -o "$out"
