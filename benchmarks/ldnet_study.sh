#!/usr/bin/env bash
# The LD-Net study of issue 5 (ld-net-lm-pruning.md) for one task, stage by stage, one
# training at a time; every training runs through scripts/timed.py, and `bench` labels
# the test set with every system in one run (one CPU thread), writing
# benchmarks/results/ner_conll03.json or chunk_conll00.json.
#
# Usage: bash benchmarks/ldnet_study.sh TASK [KEY=VALUE ...] STAGE [STAGE ...]
#   TASK:   ner (CoNLL-2003; dev = eng.testa, test = eng.testb)
#           chunk (CoNLL-2000; the last 1,000 train sentences are the dev set)
#   STAGES: convert lm nolm ldnet select prune spacy teacher student bench profile
#   (profile: where the pruned LD-Net's prediction time goes, beside spaCy's ner;
#   benchmarks/results/ldnet_profile_TASK.json)
#   KEY=VALUE (or environment): DATA (default assets), LM_STEPS, LM_DEPTH, LM_HIDDEN,
#   LM_EMBED, LM_PROJ, LM_BATCH, LM_VOCAB, LM_EVAL, LM_LIMIT (texts), STEPS (labeller training), SELECT_STEPS, SPACY_STEPS,
#   TEACHER_STEPS, TEACHER_EVAL (default min(500, TEACHER_STEPS)), STUDENT_STEPS, TARGET_LAYERS (lambda_1).
set -euo pipefail
# The interpreter to run (scripts/sh.py sets it to the one that runs `spacy project`).
PYTHON=${PYTHON:-python}
export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1}
task=${1:?usage: ldnet_study.sh TASK [KEY=VALUE ...] STAGE...}; shift
while [ $# -gt 0 ] && [[ $1 == *=* ]]; do export "${1?}"; shift; done
DATA=${DATA:-assets}
LM_STEPS=${LM_STEPS:-3000}; LM_DEPTH=${LM_DEPTH:-10}; LM_HIDDEN=${LM_HIDDEN:-300}; LM_LIMIT=${LM_LIMIT:-0}
# Defaults are the paper's LM (section 3.1); on a 2-core CPU it takes ~25 s a step.
LM_EMBED=${LM_EMBED:-300}; LM_PROJ=${LM_PROJ:-1600}; LM_BATCH=${LM_BATCH:-128}; LM_VOCAB=${LM_VOCAB:-30000}; LM_EVAL=${LM_EVAL:-500}
STEPS=${STEPS:-3000}; SELECT_STEPS=${SELECT_STEPS:-1000}; SPACY_STEPS=${SPACY_STEPS:-3000}
TEACHER_STEPS=${TEACHER_STEPS:-1500}; STUDENT_STEPS=${STUDENT_STEPS:-3000}; TARGET_LAYERS=${TARGET_LAYERS:-4}
# spacy train scores (and saves model-best) only every eval_frequency steps: a teacher
# budget below the config's 500 would otherwise keep the untrained step-0 model as best.
TEACHER_EVAL=${TEACHER_EVAL:-$(( TEACHER_STEPS < 500 ? TEACHER_STEPS : 500 ))}
case $task in
  # ents: the suffix of the files spaCy's own `ner` trains on (chunks as entities).
  ner) data=conll03; ents=""; results=benchmarks/results/ner_conll03.json ;;
  chunk) data=conll00; ents="-ents"; results=benchmarks/results/chunk_conll00.json ;;
  *) echo "unknown task $task (ner | chunk)" >&2; exit 2 ;;
esac
corpus=corpus/$data
runs=training/$task
lm=training/lm
paths="--paths.train $corpus/train.spacy --paths.dev $corpus/dev.spacy"
timed() {  # name command...
  local name=$1; shift
  echo "== $(date -Is) $task/$name: $*"
  "$PYTHON" scripts/timed.py "$runs/$name/train_cost.json" -- "$@"
  echo "== $(date -Is) $task/$name done"
}
bench() {  # system model [extra args]
  local system=$1 model=$2; shift 2
  if [ ! -d "$model" ]; then echo "skip $system: $model missing"; return; fi
  OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$PYTHON" -m spacy greenkd-bench-labeller "$model" "$corpus/test.spacy" \
    --system "$system" -o "$results" "$@"
}
spans_args() { if [ "$task" = chunk ]; then echo "--spans-key chunks"; fi; }
for stage in "$@"; do
  if [ "$task" = chunk ] && { [ "$stage" = teacher ] || [ "$stage" = student ]; }; then
    echo "stage $stage is for ner only (the transformer teacher config is an NER teacher)" >&2; exit 2
  fi
  case $stage in
    convert)
      if [ "$task" = ner ]; then
        for split in train:eng.train dev:eng.testa test:eng.testb; do
          "$PYTHON" -m spacy greenkd-convert-conll "$DATA/conll2003/${split#*:}" "$corpus/${split%%:*}.spacy" -f conll03
        done
      else
        "$PYTHON" -m spacy greenkd-convert-conll "$DATA/conll2000/train.txt" "$corpus/train.spacy" -f conll00 --hold-out 1000 --held-out-output "$corpus/dev.spacy"
        "$PYTHON" -m spacy greenkd-convert-conll "$DATA/conll2000/test.txt" "$corpus/test.spacy" -f conll00
        # spaCy's own `ner` as the chunking baseline reads the chunks as entities.
        "$PYTHON" -m spacy greenkd-convert-conll "$DATA/conll2000/train.txt" "$corpus/train-ents.spacy" -f conll00 --chunks-as-ents --hold-out 1000 --held-out-output "$corpus/dev-ents.spacy"
        "$PYTHON" -m spacy greenkd-convert-conll "$DATA/conll2000/test.txt" "$corpus/test-ents.spacy" -f conll00 --chunks-as-ents
      fi ;;
    lm) mkdir -p "$lm"; "$PYTHON" scripts/timed.py "$lm/train_cost.json" -- "$PYTHON" -m spacy greenkd-pretrain-lm \
          "$DATA/unlabeled/reuters21578_title_body.txt.gz" "$lm" --max-steps "$LM_STEPS" --depth "$LM_DEPTH" \
          --hidden-width "$LM_HIDDEN" --embed-width "$LM_EMBED" --proj-width "$LM_PROJ" --batch-size "$LM_BATCH" \
          --vocab-size "$LM_VOCAB" --eval-every "$LM_EVAL" --limit "$LM_LIMIT" ;;
    nolm) timed nolm "$PYTHON" -m spacy train "configs/${task}_ldnet.cfg" --output "$runs/nolm" $paths --training.max_steps "$STEPS" ;;
    ldnet) timed ldnet "$PYTHON" -m spacy train "configs/${task}_ldnet.cfg" --output "$runs/ldnet" $paths \
          --paths.lm "$lm/model-best" --training.max_steps "$STEPS" ;;
    select) timed ldnet-select "$PYTHON" -m spacy train "configs/${task}_ldnet_select.cfg" --output "$runs/ldnet-select" $paths \
          --paths.source "$runs/ldnet/model-best" --training.max_steps "$SELECT_STEPS" \
          --initialize.before_init.target_layers "$TARGET_LAYERS" ;;
    prune) "$PYTHON" -m spacy greenkd-prune-lm "$runs/ldnet-select/model-last" "$runs/ldnet-pruned" ;;
    spacy) timed spacy-cnn "$PYTHON" -m spacy train configs/ner_spacy_cnn.cfg --output "$runs/spacy-cnn" \
          --paths.train "$corpus/train$ents.spacy" --paths.dev "$corpus/dev$ents.spacy" --training.max_steps "$SPACY_STEPS" ;;
    teacher) timed teacher-trf "$PYTHON" -m spacy train configs/ner_trf_teacher.cfg --output "$runs/teacher-trf" $paths \
          --training.max_steps "$TEACHER_STEPS" --training.optimizer.learn_rate.total_steps "$TEACHER_STEPS" \
          --training.eval_frequency "$TEACHER_EVAL" ;;
    student) timed student-trf "$PYTHON" -m spacy distill "$runs/teacher-trf/model-best" "configs/${task}_ldnet.cfg" "$runs/student-trf" \
          $paths --paths.lm "$lm/model-best" --distillation.max_steps "$STUDENT_STEPS" ;;
    bench)
      bench nolm "$runs/nolm/model-best" $(spans_args) --train-cost "$runs/nolm/train_cost.json"
      bench ldnet "$runs/ldnet/model-best" $(spans_args) --train-cost "$lm/train_cost.json" --train-cost "$runs/ldnet/train_cost.json"
      bench ldnet-pruned "$runs/ldnet-pruned" $(spans_args) --train-cost "$lm/train_cost.json" \
        --train-cost "$runs/ldnet/train_cost.json" --train-cost "$runs/ldnet-select/train_cost.json"
      if [ -d "$runs/spacy-cnn/model-best" ]; then
        OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$PYTHON" -m spacy greenkd-bench-labeller "$runs/spacy-cnn/model-best" \
          "$corpus/test$ents.spacy" --system spacy-cnn -o "$results" --train-cost "$runs/spacy-cnn/train_cost.json"
      fi
      if [ "$task" = ner ]; then
        bench teacher-trf "$runs/teacher-trf/model-best" --repeats 1 --train-cost "$runs/teacher-trf/train_cost.json"
        bench student-trf "$runs/student-trf/model-best" --train-cost "$runs/student-trf/train_cost.json"
      fi
      "$PYTHON" benchmarks/render_table.py "$results"
      "$PYTHON" benchmarks/summarize_labeller.py --output benchmarks/results/labeller_checks.json ;;
    profile)
      OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$PYTHON" benchmarks/ldnet_profile.py "$runs/ldnet-pruned" "$runs/spacy-cnn/model-best" \
        "$corpus/test.spacy" --output "benchmarks/results/ldnet_profile_$task.json" ;;
    *) echo "unknown stage $stage" >&2; exit 2 ;;
  esac
done
