#!/usr/bin/env bash
# Train the systems of the distillation study (issue 3) on UD English-EWT under step
# budgets, one training at a time, each wrapped in scripts/timed.py so that its wall and
# CPU time land in training/NAME/train_cost.json (read by parser_distill_ewt.sh).
# Usage: bash benchmarks/parser_distill_train.sh STAGE [STAGE ...]
# Stages: full anneal base-10 base-20 base-40 base-60 base-80 d-10 d-20 d-40 d-60 d-80 d-X-drop teacher-trf trf-cnn trf-bilstm-20 trf-bilstm-20-brown trf-bilstm-20-brown-drop trf-bilstm-20-brown-drop-long spacy-cnn
# Budgets (environment): FULL_STEPS ANNEAL_STEPS STUDENT_STEPS TEACHER_STEPS CNN_STEPS SPACY_STEPS BASE_EVAL LONG_STEPS
# UNLABELED: the raw text of trf-bilstm-20-brown (default: the Brown corpus, one sentence per line)
# SUFFIX: appended to the output directory of base-x and d-x(-drop), e.g.
#   SUFFIX=-1k STUDENT_STEPS=1000 bash benchmarks/parser_distill_train.sh base-80 d-80-drop
# trains training/base-80-1k and training/d-80-drop-1k beside the default budget's models.
set -euo pipefail
# The interpreter to run (scripts/sh.py sets it to the one that runs `spacy project`).
PYTHON=${PYTHON:-python}
export HF_HUB_OFFLINE=1
FULL_STEPS=${FULL_STEPS:-3000}
ANNEAL_STEPS=${ANNEAL_STEPS:-400}
STUDENT_STEPS=${STUDENT_STEPS:-3000}
TEACHER_STEPS=${TEACHER_STEPS:-2000}
CNN_STEPS=${CNN_STEPS:-3000}
SPACY_STEPS=${SPACY_STEPS:-6000}
# Base-x evaluate every BASE_EVAL steps, so that (like spacy distill, which always scores
# its last step) their last step is scored whatever STUDENT_STEPS is.
BASE_EVAL=${BASE_EVAL:-100}
SUFFIX=${SUFFIX:-}
# trf-bilstm-20-brown-drop-long continues trf-bilstm-20-brown-drop up to LONG_STEPS steps in all.
LONG_STEPS=${LONG_STEPS:-7000}
data="--paths.train corpus/ud_en/en_ewt-ud-train.spacy --paths.dev corpus/ud_en/en_ewt-ud-dev.spacy"
full=training/full-goldpos-annealed/model-best
timed() {  # name command...
  local name=$1; shift
  echo "== $(date -Is) $name: $*"
  "$PYTHON" scripts/timed.py "training/$name/train_cost.json" -- "$@"
  echo "== $(date -Is) $name done"
}
for stage in "$@"; do
  case $stage in
    full) timed full-goldpos "$PYTHON" -m spacy train configs/parser_bilstm_goldpos.cfg --output training/full-goldpos $data --training.max_steps "$FULL_STEPS" --training.eval_frequency 200 ;;
    anneal) timed full-goldpos-annealed "$PYTHON" -m spacy train configs/parser_bilstm_goldpos_anneal.cfg --output training/full-goldpos-annealed $data --paths.source training/full-goldpos/model-best --training.max_steps "$ANNEAL_STEPS" --training.eval_frequency 50 ;;
    base-*) timed "$stage$SUFFIX" "$PYTHON" -m spacy train "configs/parser_student_${stage#base-}.cfg" --output "training/$stage$SUFFIX" $data --training.max_steps "$STUDENT_STEPS" --training.eval_frequency "$BASE_EVAL" ;;
    # Ours, not the paper's: the same distillation with the encoder's dropout (0.33) on,
    # as Base-x trains (the paper distils without dropout).
    d-*-drop) x=${stage#d-}; x=${x%-drop}; timed "$stage$SUFFIX" "$PYTHON" -m spacy distill "$full" "configs/parser_student_${x}.cfg" "training/$stage$SUFFIX" $data \
        --distillation.max_steps "$STUDENT_STEPS" --distillation.dropout 0.33 ;;
    d-*) timed "$stage$SUFFIX" "$PYTHON" -m spacy distill "$full" "configs/parser_student_${stage#d-}.cfg" "training/$stage$SUFFIX" $data --distillation.max_steps "$STUDENT_STEPS" ;;
    teacher-trf) timed teacher-trf "$PYTHON" -m spacy train configs/parser_trf_teacher.cfg --output training/teacher-trf $data --training.max_steps "$TEACHER_STEPS" --training.optimizer.learn_rate.total_steps "$TEACHER_STEPS" --training.eval_frequency 200 ;;
    trf-cnn) timed trf-cnn "$PYTHON" -m spacy distill training/teacher-trf/model-best configs/parser_cnn_raw_student.cfg training/trf-cnn $data --distillation.max_steps "$CNN_STEPS" ;;
    # The 20 % BiLSTM student of the transformer teacher, on words only (the teacher sees no POS).
    trf-bilstm-20) timed trf-bilstm-20 "$PYTHON" -m spacy distill training/teacher-trf/model-best configs/parser_student_20.cfg training/trf-bilstm-20 $data \
        --distillation.max_steps "$STUDENT_STEPS" --corpora.train.gold_pos false --corpora.dev.gold_pos false \
        --components.greenkd_parser.model.tok2vec.pos_width 0 ;;
    # The same student size, distilled on EWT train + the Brown corpus as unlabeled text
    # (57,340 sentences; only the teacher's soft targets supervise them).
    # trf-bilstm-20-brown-drop (ours): the same with the encoder's dropout (0.33) on while distilling, as d-x-drop.
    trf-bilstm-20-brown|trf-bilstm-20-brown-drop)
      drop=(); if [ "$stage" = trf-bilstm-20-brown-drop ]; then drop=(--distillation.dropout 0.33); fi
      timed "$stage" "$PYTHON" -m spacy distill training/teacher-trf/model-best configs/parser_trf_student_20.cfg "training/$stage" $data \
        --paths.unlabeled "${UNLABELED:-assets/unlabeled/brown_untagged.txt.gz}" --distillation.max_steps "$STUDENT_STEPS" "${drop[@]}" ;;
    # Ours: trf-bilstm-20-brown-drop trained on to LONG_STEPS steps in all. Its output is
    # copied and the copy resumed (spacy distill resumes from model-last: the averaged
    # weights of the last step, with a fresh optimizer), so the first STUDENT_STEPS are
    # not paid twice; the cost file of this stage covers the added steps only.
    trf-bilstm-20-brown-drop-long)
      src=training/trf-bilstm-20-brown-drop dst=training/trf-bilstm-20-brown-drop-long
      [ -f "$src/model-last/distill_state.json" ] || { echo "run the stage trf-bilstm-20-brown-drop first ($src/model-last is missing)" >&2; exit 2; }
      [ -d "$dst" ] || { cp -r "$src" "$dst.tmp" && rm -f "$dst.tmp/train_cost.json" && mv "$dst.tmp" "$dst"; }
      timed "$stage" "$PYTHON" -m spacy distill training/teacher-trf/model-best configs/parser_trf_student_20.cfg "$dst" $data \
        --paths.unlabeled "${UNLABELED:-assets/unlabeled/brown_untagged.txt.gz}" --distillation.max_steps "$LONG_STEPS" --distillation.dropout 0.33 ;;
    spacy-cnn) timed spacy-cnn "$PYTHON" -m spacy train configs/spacy_cnn_tagger_parser.cfg --output training/spacy-cnn $data --training.max_steps "$SPACY_STEPS" --training.eval_frequency 200 ;;
    *) echo "unknown stage $stage" >&2; exit 2 ;;
  esac
done
