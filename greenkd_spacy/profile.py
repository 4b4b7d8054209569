"""Where a pipeline's time goes, stage by stage, in microseconds per word on one thread.

A words/s figure says how fast a pipeline is, not what to make faster. The profile
splits one pass into the tokenizer, and for each component its network (`predict`),
its decoding where greenkd's components decode in a step of their own (the parser's
maximum spanning tree, the labeller's Viterbi), and `set_annotations`; a component
that is not trainable (attribute_ruler, a rule lemmatizer) is one stage. spaCy's
transition-based parser and ner decode inside `predict` (the network runs once per
transition), so their decoding is part of their network's stage.

Each stage is timed over the whole text, batch by batch as `nlp.pipe` runs it; the
passes are repeated and each stage's fastest pass counts.
"""
import gc
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Sequence

from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.util import minibatch

from .bench import one_thread, timing_copies
from .models.pytorch.biaffine import BiaffineParserModule
from .models.pytorch.crf import LinearChainCRF


@dataclass
class Clock:
    """Seconds spent in the wrapped calls since the last reset."""

    seconds: float = 0.0

    def wrap(self, function: Callable) -> Callable:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        return timed


@contextmanager
def decoding_clock(pipe: Any) -> Iterator[Clock]:
    """A clock on the decoding step inside a greenkd component's predict (the MST of a
    greenkd_parser, the Viterbi of a CRF labeller); it reads 0 for other components."""
    clock = Clock()
    patched: List[Any] = []
    model = getattr(pipe, "model", None)
    if model is not None:
        for node in model.walk():
            for shim in node.shims:
                module = getattr(shim, "_model", None)
                if module is None or not hasattr(module, "modules"):
                    continue
                for sub in module.modules():
                    if isinstance(sub, BiaffineParserModule) and sub.decoder is not None:
                        patched.append((sub, "decoder", sub.decoder))
                        sub.decoder = clock.wrap(sub.decoder)
                    elif isinstance(sub, LinearChainCRF):
                        # viterbi() reads viterbi_padded() too: one clock covers both.
                        patched.append((sub, "viterbi_padded", None))
                        sub.viterbi_padded = clock.wrap(sub.viterbi_padded)
    try:
        yield clock
    finally:
        for sub, attr, original in patched:
            if original is None:
                del sub.__dict__[attr]  # the class's method again
            else:
                setattr(sub, attr, original)


def _one_pass(nlp: Language, texts: Sequence[str], batch_size: int) -> Dict[str, float]:
    """Seconds per stage of one pass over the texts."""
    gc.collect()
    stages: Dict[str, float] = {}
    start = time.perf_counter()
    docs: List[Doc] = [nlp.make_doc(text) for text in texts]
    stages["tokenizer"] = time.perf_counter() - start
    for name, pipe in nlp.pipeline:
        if isinstance(pipe, TrainablePipe):
            predict = annotate = 0.0
            with decoding_clock(pipe) as decoding:
                for batch in minibatch(docs, batch_size):
                    start = time.perf_counter()
                    scores = pipe.predict(batch)
                    middle = time.perf_counter()
                    pipe.set_annotations(batch, scores)
                    predict += middle - start
                    annotate += time.perf_counter() - middle
            if decoding.seconds:
                stages[f"{name}: network"] = predict - decoding.seconds
                stages[f"{name}: decoding"] = decoding.seconds
            else:
                stages[f"{name}: network"] = predict
            stages[f"{name}: set_annotations"] = annotate
        else:
            start = time.perf_counter()
            docs = list(pipe.pipe(docs, batch_size=batch_size)) if hasattr(pipe, "pipe") else [pipe(doc) for doc in docs]
            stages[name] = time.perf_counter() - start
    return stages


def stage_profile(
    nlp: Language, texts: Sequence[str], *, batch_size: int = 256, rounds: int = 3, min_words: int = 20000
) -> Dict[str, Any]:
    """The profile of `nlp` on `texts` (repeated whole until a pass covers
    `min_words`), on one thread: per stage its microseconds per word and share of the
    pass, and the words/s of the whole (the sum of the stages' fastest passes).

    RETURNS (Dict[str, Any]): {"words": ..., "words_per_second": ..., "stages": [{"stage",
        "seconds", "us_per_word", "share"}, ...]} in pipeline order.
    """
    one_thread()
    n_words = sum(len(nlp.make_doc(text)) for text in texts)
    copies = timing_copies(n_words, min_words)
    texts = list(texts) * copies
    words = n_words * copies
    best: Dict[str, float] = {}
    for _ in range(rounds):
        for stage, seconds in _one_pass(nlp, texts, batch_size).items():
            best[stage] = min(best.get(stage, float("inf")), seconds)
    total = sum(best.values())
    return {
        "words": words,
        "words_per_second": round(words / total, 1) if total else 0.0,
        "stages": [
            {"stage": stage, "seconds": round(seconds, 4), "us_per_word": round(1e6 * seconds / words, 2),
             "share": round(seconds / total, 4) if total else 0.0}
            for stage, seconds in best.items()
        ],
    }
