#!/usr/bin/env bash
# The distillation study of issue 3 on EWT test, one CPU thread, in one run: Full,
# Base-10..80, D-10..80 (paper setting: gold UPOS; 10 % is ours), the transformer teacher and its
# students (realistic setting, no POS: the CNN student and the 20 % BiLSTM), and spaCy's
# CNN tagger + parser. Systems whose model is missing are skipped with a note.
# Usage: bash benchmarks/parser_distill_ewt.sh [BATCH_SIZE]
set -uo pipefail
# The interpreter to run (scripts/sh.py sets it to the one that runs `spacy project`).
PYTHON=${PYTHON:-python}
batch=${1:-256}
out=benchmarks/results/parser_distill_ewt.json
test=corpus/ud_en/en_ewt-ud-test.spacy
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 HF_HUB_OFFLINE=1
bench() {  # system model [extra args]
  local system=$1 model=$2; shift 2
  if [ ! -d "$model" ]; then echo "skip $system: $model missing"; return; fi
  "$PYTHON" -m spacy greenkd-bench-parser "$model" "$test" --system "$system" -b "$batch" -o "$out" "$@"
}
bench full training/full-goldpos-annealed/model-best --gold-pos \
  --train-cost training/full-goldpos/train_cost.json --train-cost training/full-goldpos-annealed/train_cost.json
for x in 10 20 40 60 80; do
  bench base-$x training/base-$x/model-best --gold-pos --train-cost training/base-$x/train_cost.json
  bench d-$x training/d-$x/model-best --gold-pos --distill-summary training/d-$x/distill_summary.json
  # Ours: distilled with dropout 0.33 (trained only where training/d-x-drop exists).
  if [ -d training/d-$x-drop ]; then
    bench d-$x-drop training/d-$x-drop/model-best --gold-pos --distill-summary training/d-$x-drop/distill_summary.json
  fi
done
# Base-x and D-x(-drop) trained for a second step budget (SUFFIX=-1k STUDENT_STEPS=1000
# bash benchmarks/parser_distill_train.sh ...), where on disk.
for dir in training/base-*-1k training/d-*-1k; do
  [ -d "$dir" ] || continue
  name=${dir#training/}
  case $name in
    base-*) bench "$name" "$dir/model-best" --gold-pos --train-cost "$dir/train_cost.json" ;;
    *) bench "$name" "$dir/model-best" --gold-pos --distill-summary "$dir/distill_summary.json" ;;
  esac
done
bench teacher-trf training/teacher-trf/model-best --repeats 1 --train-cost training/teacher-trf/train_cost.json
bench student-trf-cnn training/trf-cnn/model-best --distill-summary training/trf-cnn/distill_summary.json
bench student-trf-bilstm-20 training/trf-bilstm-20/model-best --distill-summary training/trf-bilstm-20/distill_summary.json
bench student-trf-bilstm-20-brown training/trf-bilstm-20-brown/model-best --distill-summary training/trf-bilstm-20-brown/distill_summary.json
bench student-trf-bilstm-20-brown-drop training/trf-bilstm-20-brown-drop/model-best --distill-summary training/trf-bilstm-20-brown-drop/distill_summary.json
# Ours: the same student trained on to 7,000 steps (resumed; training cost of both phases).
bench student-trf-bilstm-20-brown-drop-long training/trf-bilstm-20-brown-drop-long/model-best \
  --distill-summary training/trf-bilstm-20-brown-drop/distill_summary.json --distill-summary training/trf-bilstm-20-brown-drop-long/distill_summary.json
bench spacy-cnn training/spacy-cnn/model-best --train-cost training/spacy-cnn/train_cost.json
