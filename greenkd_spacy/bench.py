"""Measure a pipeline the way our users compare systems: accuracy, words per second on
one CPU thread, parameters and size on disk, in one run. Every greenkd-bench-* command
uses this module; the CLI modules only parse arguments. (The studies' results rows,
with training cost, command and date, are kept by the repository's benchmarks/.)"""
import gc
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import torch
from threadpoolctl import threadpool_limits
import spacy
from spacy.language import Language
from spacy.pipeline.dep_parser import parser_score
from spacy.scorer import Scorer
from spacy.tokenizer import Tokenizer
from spacy.tokens import Doc
from spacy.training import Example

from .models.torch_bridge import module_of
from .util import count_parameters


def one_thread() -> None:
    """Time on one CPU thread: torch's intra-op pool and every BLAS / OpenMP pool numpy
    uses (threadpoolctl), whatever OMP_NUM_THREADS the shell had."""
    torch.set_num_threads(1)
    threadpool_limits(limits=1)


def pipeline_parameters(nlp: Language) -> int:
    """Trainable parameters of every component with a model (listeners count once)."""
    return sum(
        count_parameters(pipe.model) for _, pipe in nlp.pipeline if hasattr(pipe, "model")
    )


def disk_bytes(path: Optional[Path]) -> Optional[int]:
    if path is None or not Path(path).exists():
        return None
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


class DecoderTimer:
    """Wrap the MST decoder of every greenkd_parser to measure its share of parse time."""

    def __init__(self, nlp: Language):
        self.seconds = 0.0
        self.wrapped = []
        for _, pipe in nlp.pipeline:
            model = getattr(pipe, "model", None)
            if model is None or model.name != "greenkd_biaffine_parser" or len(model.layers) < 2:
                continue
            module = module_of(model.layers[1])
            self.wrapped.append((module, module.decoder))
            module.decoder = self._timed(module.decoder)

    def _timed(self, decoder):
        def timed(*args):
            start = time.perf_counter()
            result = decoder(*args)
            self.seconds += time.perf_counter() - start
            return result

        return timed

    def restore(self) -> None:
        for module, decoder in self.wrapped:
            module.decoder = decoder


def _fresh_examples(examples: List[Example]) -> List[Example]:
    return [Example(eg.predicted.copy(), eg.reference) for eg in examples]


# A timed pass covers at least this many words (timing_copies).
MIN_TIMED_WORDS = 20000


def timing_copies(n_words: int, min_words: int) -> int:
    """How many whole copies of a test set one timed pass runs, so that it covers at
    least ``min_words`` words: Tamil-TTB's 1,989 test words pass in 0.2 s, and passes
    that short measured one model at 0.65x and 1.34x of another in two runs 3 minutes
    apart."""
    return max(1, -(-min_words // max(1, n_words)))


def bench_parser(
    nlp: Language, examples: List[Example], *, batch_size: int = 256, repeats: int = 3, min_words: int = MIN_TIMED_WORDS
) -> Dict:
    """Parse the examples' predicted docs with the whole pipeline and score them.

    Speed is the best of ``repeats`` timed passes over fresh copies of the docs (the
    test set repeated whole until a pass covers ``min_words``), on one thread;
    tokenization is not included (the docs are pre-tokenized, gold tokens).
    RETURNS (Dict): uas/las as spaCy's parser scorer gives them (punctuation excluded),
        the same with punctuation, words/s, parameters and the MST share of parse time.
    """
    one_thread()
    n_words = sum(len(eg.predicted) for eg in examples)
    parsed = _fresh_examples(examples)
    for eg, doc in zip(parsed, nlp.pipe([eg.predicted for eg in parsed], batch_size=batch_size)):
        eg.predicted = doc
    spacy_scores = parser_score(parsed)
    with_punct = Scorer.score_deps(
        parsed,
        "dep",
        getter=lambda token, attr: token.vocab.strings.as_string(getattr(token, attr)).lower(),
        head_attr="head",
        ignore_labels=(),
    )
    token_scores = token_attr_scores(nlp, parsed)
    timings = []
    decoder_share = None
    copies = timing_copies(n_words, min_words)
    for _ in range(repeats):
        docs = [eg.predicted for eg in _fresh_examples(examples * copies)]
        timer = DecoderTimer(nlp)
        start = time.perf_counter()
        for _ in nlp.pipe(docs, batch_size=batch_size):
            pass
        elapsed = time.perf_counter() - start
        timer.restore()
        if not timings or elapsed < min(timings):
            decoder_share = timer.seconds / elapsed if timer.wrapped else None
        timings.append(elapsed)
    return {
        "uas": round(100 * (spacy_scores["dep_uas"] or 0.0), 2),
        "las": round(100 * (spacy_scores["dep_las"] or 0.0), 2),
        "uas_with_punct": round(100 * (with_punct["dep_uas"] or 0.0), 2),
        "las_with_punct": round(100 * (with_punct["dep_las"] or 0.0), 2),
        "words": n_words,
        "timed_words": n_words * copies,
        "words_per_second": round(n_words * copies / min(timings)),
        "seconds": [round(t, 3) for t in timings],
        "batch_size": batch_size,
        "mst_share_of_parse_time": None if decoder_share is None else round(decoder_share, 4),
        **token_scores,
        "params": pipeline_parameters(nlp),
        "threads": torch.get_num_threads(),
    }


# Token attributes a pipeline may predict beside the parse, and their result fields.
_TOKEN_ATTRS = (("tag", "tag_acc"), ("pos", "upos_acc"), ("morph", "morph_acc"))


def token_attr_scores(nlp: Language, examples: List[Example]) -> Dict[str, float]:
    """Accuracy of each token attribute some component of the pipeline assigns (a
    tagger's tags, a morphologizer's UPOS and features), so a parsing pipeline's row
    shows everything it predicts; attributes nobody assigns are left out, not zero."""
    assigned = set()
    for name in nlp.pipe_names:
        assigned.update(nlp.get_pipe_meta(name).assigns)
    scores = {}
    for attr, field in _TOKEN_ATTRS:
        if f"token.{attr}" not in assigned:
            continue
        if attr == "morph":
            # As spaCy's morphologizer scores it: the whole feature string of a token.
            result = Scorer.score_token_attr(examples, "morph", getter=lambda token, _: token.morph.key)
        else:
            result = Scorer.score_token_attr(examples, attr)
        accuracy = result[f"{attr}_acc"]
        scores[field] = None if accuracy is None else round(100 * accuracy, 2)
    return scores


def repeated_texts(texts: Sequence[str], min_docs: int) -> List[str]:
    """The texts repeated whole until one timed pass covers at least ``min_docs`` docs
    (a 500-question test set takes a fast model 10 ms: too short to time)."""
    return list(texts) * max(1, -(-min_docs // max(1, len(texts))))


def timed_pass(nlp: Language, texts: Sequence[str], batch_size: int) -> float:
    """Seconds for one pass of the whole pipeline (tokenization included) over the texts.

    The garbage of earlier passes is collected first (as the profile and the interleaved
    benches do): otherwise a full collection of it, ~0.24 s for any pipeline, fell into
    about every other pass of 10,000 SST-2 sentences and, landing on two of three passes,
    made one row look 1.6x slower than the same weights in the next row."""
    gc.collect()
    start = time.perf_counter()
    for _ in nlp.pipe(texts, batch_size=batch_size):
        pass
    return time.perf_counter() - start


def class_scores(predicted: Sequence[Optional[str]], gold: Sequence[str]) -> Dict[str, Dict[str, float]]:
    """Precision, recall and F1 (percent) of each gold class, and its support."""
    scores = {}
    for label in sorted(set(gold)):
        tp = sum(p == label and g == label for p, g in zip(predicted, gold))
        n_pred = sum(p == label for p in predicted)
        n_gold = sum(g == label for g in gold)
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / n_gold if n_gold else 0.0
        f = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        scores[label] = {"p": round(100 * precision, 2), "r": round(100 * recall, 2), "f": round(100 * f, 2), "support": n_gold}
    return scores


def macro_f1(per_class: Dict[str, Dict[str, float]]) -> float:
    """Macro-F1 (percent) over the gold classes of class_scores: accuracy hides a rare
    class (TREC's ABBR)."""
    return round(sum(c["f"] for c in per_class.values()) / max(1, len(per_class)), 2)


def predicted_labels(nlp: Language, texts: Sequence[str], batch_size: int = 1000) -> List[Optional[str]]:
    """Each text's highest-scoring category through the whole pipeline (None: no cats)."""
    return [max(doc.cats, key=doc.cats.get) if doc.cats else None for doc in nlp.pipe(texts, batch_size=batch_size)]


def bench_textcat(
    nlp: Language,
    texts: List[str],
    gold: List[str],
    *,
    batch_sizes: Sequence[int] = (32, 1000),
    repeats: int = 3,
    min_docs: int = 10000,
) -> Dict:
    """Classify raw texts with the whole pipeline (tokenization included) and score them.

    Accuracy counts the doc's highest-scoring category against the gold label; speed
    is docs/s, the best of ``repeats`` passes at each batch size, on one thread. A timed
    pass covers at least ``min_docs`` docs (the texts repeated): test sets such as
    TREC's 500 questions are smaller than one batch of 1,000 and take a fast model
    10 ms, too short to time.
    RETURNS (Dict): accuracy, macro-F1 and per-class P/R/F (percent), docs/s per batch
        size (the largest batch size also as ``docs_per_second``), words/s, parameters.
    """
    one_thread()
    predicted = predicted_labels(nlp, texts, max(batch_sizes))
    correct = sum(p == g for p, g in zip(predicted, gold))
    per_class = class_scores(predicted, gold)
    # Words as spaCy's rule tokenizer for the language splits them, whatever the
    # pipeline's own tokenizer (greenkd.WordTokenizer.v1 splits differently): words/s of
    # two pipelines on the same texts divide the same count.
    counter = nlp.tokenizer if isinstance(nlp.tokenizer, Tokenizer) else spacy.blank(nlp.lang).tokenizer
    n_words = sum(len(doc) for doc in counter.pipe(texts))
    timed_texts = repeated_texts(texts, min_docs)
    by_batch: Dict[str, float] = {}
    seconds: Dict[str, List[float]] = {}
    for batch_size in batch_sizes:
        timings = [timed_pass(nlp, timed_texts, batch_size) for _ in range(repeats)]
        by_batch[str(batch_size)] = round(len(timed_texts) / min(timings), 1)
        seconds[str(batch_size)] = [round(t, 3) for t in timings]
    largest = str(max(batch_sizes))
    return {
        "accuracy": round(100 * correct / max(1, len(texts)), 2),
        "macro_f1": macro_f1(per_class),
        "per_class": per_class,
        "docs": len(texts),
        "words": n_words,
        "timed_docs": len(timed_texts),
        "docs_per_second": by_batch[largest],
        "docs_per_second_by_batch": by_batch,
        "words_per_second": round(n_words * by_batch[largest] / max(1, len(texts))),
        "seconds": seconds,
        "params": pipeline_parameters(nlp),
        "threads": torch.get_num_threads(),
    }


def fresh_docs(nlp: Language, reference: Sequence[Doc]) -> List[Doc]:
    """New docs of the reference's tokens and nothing else, in ``nlp``'s vocab: a pass
    timed on gold tokens, with no annotation a pipe could reuse."""
    return [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in reference]


def bench_labeller(
    nlp: Language,
    reference: List[Doc],
    *,
    batch_size: int = 256,
    repeats: int = 3,
    spans_key: Optional[str] = None,
    min_words: int = MIN_TIMED_WORDS,
) -> Dict:
    """Label gold-tokenized docs on one thread, best of `repeats` passes: span F1
    (spaCy's scorer, on the timed pass's output), words/s, LM FLOPs per token and gates
    of every greenkd labeller, parameters."""
    from .pipeline.labeller import SequenceLabeller

    one_thread()
    words = sum(len(doc) for doc in reference)

    copies = timing_copies(words, min_words)
    timings = []
    for _ in range(max(1, repeats)):
        docs = fresh_docs(nlp, reference * copies)
        start = time.perf_counter()
        predicted = list(nlp.pipe(docs, batch_size=batch_size))
        timings.append(time.perf_counter() - start)
    # Scored on the last copy (with one copy: the whole timed pass).
    examples = [Example(p, r) for p, r in zip(predicted[-len(reference):] if reference else [], reference)]
    if spans_key:
        scores = Scorer.score_spans(
            examples, attr=f"spans_{spans_key}", getter=lambda d, a: d.spans.get(spans_key, []), allow_overlap=False
        )
        f1 = scores[f"spans_{spans_key}_f"]
    else:
        f1 = Scorer.score_spans(examples, attr="ents")["ents_f"]
    labellers = [pipe for _, pipe in nlp.pipeline if isinstance(pipe, SequenceLabeller)]
    return {
        "f1": round(100 * (f1 or 0.0), 2),
        "words": words,
        "timed_words": words * copies,
        "words_per_second": round(words * copies / min(timings)),
        "seconds": [round(t, 3) for t in timings],
        "batch_size": batch_size,
        "lm_flops_per_token": sum(p.lm_flops_per_token() for p in labellers),
        "lm_gates": {p.name: p.lm_gates() for p in labellers if p.lm_gates()},
        "params": pipeline_parameters(nlp),
        "threads": torch.get_num_threads(),
    }
