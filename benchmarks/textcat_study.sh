#!/usr/bin/env bash
# The text classification study of issue 4 (sparse-distillation-dan.md) for one task,
# stage by stage, one training at a time. Every training runs through scripts/timed.py
# (wall and CPU seconds, peak memory in training/TASK/NAME/train_cost.json); `bench`
# times every system in one run and writes benchmarks/results/textcat_TASK.json.
#
# Usage: bash benchmarks/textcat_study.sh TASK [KEY=VALUE ...] STAGE [STAGE ...]
#   TASK:   sst2 (evaluated on the GLUE dev set) | trec (evaluated on TREC_10, 6 coarse classes)
#   STAGES: convert transfer teacher scratch kd kd-ft bow prune bench
#   KEY=VALUE (or environment): DATA (datasets in the layout of ../shared/data, default
#   assets), TEACHER_STEPS, DAN_STEPS, KD_STEPS (default: sst2 4000, trec 3000), FT_STEPS, BOW_STEPS, UNLABELED_LIMIT
#   (unlabeled docs the teacher labels for KD), IMDB_SENTENCES (sst2: IMDB unsup sentences
#   in the transfer set), AUG_VARIANTS (trec: augmented variants per training question), IMDB_QUESTIONS
#   (trec: 1 adds the questions of IMDB's unlabeled reviews to the transfer set, 0 not).
set -euo pipefail
# The interpreter to run (scripts/sh.py sets it to the one that runs `spacy project`).
PYTHON=${PYTHON:-python}
export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1}
task=${1:?usage: textcat_study.sh TASK [KEY=VALUE ...] STAGE...}; shift
while [ $# -gt 0 ] && [[ $1 == *=* ]]; do export "${1?}"; shift; done
DATA=${DATA:-assets}
TEACHER_STEPS=${TEACHER_STEPS:-2000}
DAN_STEPS=${DAN_STEPS:-2000}
FT_STEPS=${FT_STEPS:-1000}
BOW_STEPS=${BOW_STEPS:-2000}
case $task in
  # Model selection on a held-out 5 % of GLUE train; the GLUE dev set is the test set.
  sst2) fmt=sst2; train_file=$DATA/sst2/train.tsv; eval_file=$DATA/sst2/dev.tsv; heldout=0.05
        # Review-domain sentences, lowercased and tokenised like SST-2 (no RT snippets):
        # the Pang & Lee reviews + IMDB's unlabeled reviews cut into sentences (transfer stage).
        unlabeled=corpus/sst2/transfer.txt.gz; UNLABELED_LIMIT=${UNLABELED_LIMIT:-0}
        IMDB_SENTENCES=${IMDB_SENTENCES:-200000}; KD_STEPS=${KD_STEPS:-4000} ;;
  # The paper distils TREC on 65M PAQ questions, which are not available offline; the
  # transfer set is 8 variants of each training question (greenkd-augment-text, Tang et
  # al. 2019) plus the questions found in the Brown corpus and the movie reviews.
  trec) fmt=trec; train_file=$DATA/trec/train_5500.label; eval_file=$DATA/trec/TREC_10.label; heldout=0.1
        unlabeled=corpus/trec/transfer.txt.gz; UNLABELED_LIMIT=${UNLABELED_LIMIT:-0}; KD_STEPS=${KD_STEPS:-3000}
        AUG_VARIANTS=${AUG_VARIANTS:-8}; IMDB_QUESTIONS=${IMDB_QUESTIONS:-1} ;;
  *) echo "unknown task $task (sst2 | trec)" >&2; exit 2 ;;
esac
corpus=corpus/$task
runs=training/$task
results=benchmarks/results/textcat_$task.json
data="--paths.train $corpus/train.spacy --paths.dev $corpus/heldout.spacy"
timed() {  # name command...
  local name=$1; shift
  echo "== $(date -Is) $task/$name: $*"
  "$PYTHON" scripts/timed.py "$runs/$name/train_cost.json" -- "$@"
  echo "== $(date -Is) $task/$name done"
}
bench() {  # system model steps [extra args]
  local system=$1 model=$2 steps=$3; shift 3
  if [ ! -d "$model" ]; then echo "skip $system: $model missing"; return; fi
  OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$PYTHON" -m spacy greenkd-bench-textcat "$model" "$corpus/eval.spacy" \
    --system "$system" -o "$results" --train-steps "$steps" "$@"
}
# The DAN that is pruned: KD+FT when it exists, else KD.
final_dan() { if [ -d "$runs/dan-kd-ft/model-best" ]; then echo "$runs/dan-kd-ft/model-best"; else echo "$runs/dan-kd/model-best"; fi; }
for stage in "$@"; do
  case $stage in
    convert)
      "$PYTHON" -m spacy greenkd-convert-textcat "$train_file" "$corpus/train.spacy" -f "$fmt" \
        --dev-output "$corpus/heldout.spacy" --dev-fraction "$heldout"
      "$PYTHON" -m spacy greenkd-convert-textcat "$eval_file" "$corpus/eval.spacy" -f "$fmt" ;;
    transfer)
      if [ "$task" = trec ]; then
        "$PYTHON" -m spacy greenkd-augment-text "$corpus/train.spacy" "$corpus/augmented.txt.gz" --variants "$AUG_VARIANTS" --seed 0
        # The questions of IMDB's unlabeled reviews (cased, like TREC): new words, which
        # variants of the training questions cannot add (the 2026-11-23 run had none).
        if [ "$IMDB_QUESTIONS" = 1 ]; then
          "$PYTHON" -m spacy greenkd-split-text "$DATA/imdb/unsup.jsonl.gz" "$corpus/imdb_unsup_cased.txt.gz" --keep-case --max-words 40
        fi
        { zcat "$corpus/augmented.txt.gz"
          zcat "$DATA/unlabeled/brown_untagged.txt.gz" "$DATA/unlabeled/movie_reviews_polarity2.txt.gz" | grep -E '\?[[:space:]]*$' || true
          if [ "$IMDB_QUESTIONS" = 1 ]; then zcat "$corpus/imdb_unsup_cased.txt.gz" | grep -E '\?$' || true; fi
        } | gzip -n > "$corpus/transfer.txt.gz"
      else
        "$PYTHON" -m spacy greenkd-split-text "$DATA/imdb/unsup.jsonl.gz" "$corpus/imdb_unsup_sentences.txt.gz" \
          --limit "$IMDB_SENTENCES" --max-words 60
        zcat "$DATA/unlabeled/movie_reviews_polarity2.txt.gz" "$corpus/imdb_unsup_sentences.txt.gz" | gzip -n > "$corpus/transfer.txt.gz"
      fi
      echo "transfer set: $(zcat "$corpus/transfer.txt.gz" | wc -l) texts in $corpus/transfer.txt.gz" ;;
    teacher) timed teacher-trf "$PYTHON" -m spacy train configs/textcat_trf_teacher.cfg --output "$runs/teacher-trf" $data \
        --training.max_steps "$TEACHER_STEPS" ;;
    scratch) timed dan-scratch "$PYTHON" -m spacy train configs/textcat_dan.cfg --output "$runs/dan-scratch" $data \
        --training.max_steps "$DAN_STEPS" ;;
    kd) timed dan-kd "$PYTHON" -m spacy distill "$runs/teacher-trf/model-best" configs/textcat_dan.cfg "$runs/dan-kd" $data \
        --paths.unlabeled "$unlabeled" --paths.unlabeled_limit "$UNLABELED_LIMIT" --distillation.max_steps "$KD_STEPS" ;;
    kd-ft) timed dan-kd-ft "$PYTHON" -m spacy train configs/textcat_dan_ft.cfg --output "$runs/dan-kd-ft" $data \
        --paths.source "$runs/dan-kd/model-best" --training.max_steps "$FT_STEPS" ;;
    bow) timed spacy-bow "$PYTHON" -m spacy train configs/textcat_spacy_bow.cfg --output "$runs/spacy-bow" $data \
        --training.max_steps "$BOW_STEPS" ;;
    prune)
      for keep in 30 10 3; do
        "$PYTHON" -m spacy greenkd-prune-textcat "$(final_dan)" "$runs/dan-pruned-$keep" --keep "0.$(printf %02d "$keep")"
      done ;;
    bench)
      bench teacher-trf "$runs/teacher-trf/model-best" "$TEACHER_STEPS" --train-cost "$runs/teacher-trf/train_cost.json" --repeats 1
      bench spacy-bow "$runs/spacy-bow/model-best" "$BOW_STEPS" --train-cost "$runs/spacy-bow/train_cost.json"
      bench dan-scratch "$runs/dan-scratch/model-best" "$DAN_STEPS" --train-cost "$runs/dan-scratch/train_cost.json"
      bench dan-kd "$runs/dan-kd/model-best" "$KD_STEPS" --train-cost "$runs/dan-kd/train_cost.json"
      # TREC's first KD run, on 20,000 Brown sentences (general text), kept for comparison.
      bench dan-kd-brown "$runs/dan-kd-brown/model-best" "$KD_STEPS" --train-cost "$runs/dan-kd-brown/train_cost.json"
      bench dan-kd-ft "$runs/dan-kd-ft/model-best" "$FT_STEPS" --train-cost "$runs/dan-kd-ft/train_cost.json"
      for keep in 30 10 3; do bench "dan-pruned-$keep" "$runs/dan-pruned-$keep" 0; done
      "$PYTHON" benchmarks/render_table.py "$results" ;;
    *) echo "unknown stage $stage" >&2; exit 2 ;;
  esac
done
