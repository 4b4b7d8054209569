"""Where an LD-Net labeller's prediction time goes, beside spaCy's CPU `ner`.

The study asks the pruned LD-Net NER to match spaCy's CNN `ner` in words/s on one CPU
thread. This script shows why it does not by splitting one timed pass over the test set
into the labeller's parts - the context-aware character LSTM, the (pruned) LM, the
word-level BiLSTM, the CRF head (emissions + Viterbi) and the rest (featurising docs,
chunking, writing spans) - and gives each torch part its multiply-adds per token. spaCy's
pipeline is timed component by component in the same run.

Usage: python benchmarks/run.py ldnet_profile LDNET_MODEL SPACY_MODEL TEST.spacy
           [--batch-size 256] [--output benchmarks/archive/ldnet_profile_ner.json]
"""
import argparse
import datetime
import json
import os
import sys
import time
from collections import defaultdict
from typing import Callable, Dict, List

import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, DocBin

from greenkd_spacy.models.labeller import encoder_module, is_ldnet_encoder
from greenkd_spacy.models.pytorch.dense_lm import lstm_step_flops
from greenkd_spacy.models.torch_bridge import module_of


class PartTimer:
    """Accumulates wall seconds per named part, through torch forward hooks or by
    wrapping a bound method of a module instance."""

    def __init__(self) -> None:
        self.seconds: Dict[str, float] = defaultdict(float)
        self._starts: Dict[str, float] = {}
        self._undo: List[Callable[[], None]] = []

    def hook_module(self, name: str, module: torch.nn.Module) -> None:
        def pre(*_):
            self._starts[name] = time.perf_counter()

        def post(*_):
            self.seconds[name] += time.perf_counter() - self._starts.pop(name)

        handles = [module.register_forward_pre_hook(pre), module.register_forward_hook(post)]
        self._undo.append(lambda: [h.remove() for h in handles])

    def wrap_method(self, name: str, owner: object, attr: str) -> None:
        original = getattr(owner, attr)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start

        setattr(owner, attr, timed)
        self._undo.append(lambda: delattr(owner, attr))

    def remove(self) -> None:
        for undo in self._undo:
            undo()


def lstm_macs(lstm: torch.nn.LSTM) -> int:
    """Multiply-adds of one time step of one direction, counted as the LM's are."""
    return lstm_step_flops(lstm.input_size, lstm.hidden_size)


def ldnet_parts(nlp: Language, docs: List[Doc], batch_size: int) -> Dict:
    name, pipe = next(((n, p) for n, p in nlp.pipeline if hasattr(p, "lm_flops_per_token")), (None, None))
    if pipe is None:
        raise SystemExit(f"No greenkd_ner or greenkd_chunker in {nlp.pipe_names}: pass an LD-Net pipeline first.")
    tok2vec = pipe.model.layers[0]
    if not is_ldnet_encoder(tok2vec):
        raise SystemExit(f"{name} does not run on greenkd.LDNetEncoder.v1; nothing to split.")
    encoder = encoder_module(tok2vec)
    head = module_of(pipe.model.layers[1])
    timer = PartTimer()
    timer.wrap_method("char_lstm", encoder, "_chars")
    if encoder.lm is not None:
        timer.wrap_method("language_model", encoder.lm, "directions")
    timer.hook_module("word_bilstm", encoder.lstm)
    timer.hook_module("crf_head", head)
    words = sum(len(d) for d in docs)
    start = time.perf_counter()
    list(nlp.pipe(docs, batch_size=batch_size))
    total = time.perf_counter() - start
    timer.remove()
    # Character steps per word as _encoder_inputs lays them out: " w1 w2 ... wn ".
    char_steps = sum(sum(len(t.text) + 1 for t in d) + 1 for d in docs if len(d))
    chars_per_word = char_steps / words
    macs = {
        "char_lstm": round(chars_per_word * (lstm_macs(encoder.char_fwd) + lstm_macs(encoder.char_bwd)))
        + encoder.char_proj.in_features * encoder.char_proj.out_features,
        "language_model": encoder.lm_flops_per_token(),
        "word_bilstm": 2 * lstm_macs(encoder.lstm),
        "crf_head": head.linear.in_features * head.linear.out_features,
    }
    parts = {}
    for part, seconds in timer.seconds.items():
        parts[part] = {"seconds": round(seconds, 6), "share": round(seconds / total, 3), "macs_per_word": macs.get(part)}
    rest = total - sum(timer.seconds.values())
    parts["rest"] = {"seconds": round(rest, 6), "share": round(rest / total, 3), "macs_per_word": None}
    return {
        "words": words,
        "seconds": round(total, 6),
        "words_per_second": round(words / total),
        "chars_per_word": round(chars_per_word, 2),
        "macs_per_word": sum(macs.values()),
        "parts": parts,
    }


def spacy_parts(nlp: Language, docs: List[Doc], batch_size: int) -> Dict:
    """Each component over the whole test set in pipeline order (what nlp.pipe does,
    one component at a time, so that each gets its own clock)."""
    words = sum(len(d) for d in docs)
    parts = {}
    total = 0.0
    for name, proc in nlp.pipeline:
        start = time.perf_counter()
        docs = list(proc.pipe(docs, batch_size=batch_size))
        seconds = time.perf_counter() - start
        total += seconds
        parts[name] = {"seconds": round(seconds, 6)}
    for part in parts.values():
        part["share"] = round(part["seconds"] / total, 3)
    return {"words": words, "seconds": round(total, 6), "words_per_second": round(words / total), "parts": parts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ldnet", help="an LD-Net pipeline (greenkd_ner or greenkd_chunker on greenkd.LDNetEncoder.v1)")
    parser.add_argument("spacy_model", help="spaCy's own CPU ner pipeline, trained on the same data")
    parser.add_argument("test", help="the .spacy test set (its texts are re-tokenised by each pipeline)")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--output", default="benchmarks/archive/ldnet_profile_ner.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = {}
    for key, path, split in (("ldnet", args.ldnet, ldnet_parts), ("spacy", args.spacy_model, spacy_parts)):
        nlp = spacy.load(path)
        docs = [nlp.make_doc(d.text) for d in DocBin().from_disk(args.test).get_docs(nlp.vocab)]
        list(nlp.pipe(docs[:256], batch_size=args.batch_size))  # warm up
        rows[key] = {"model": path, **split(nlp, docs, args.batch_size)}
        print(f"{key}: {rows[key]['words_per_second']:,} words/s", file=sys.stderr)
    result = {
        **rows,
        "command": "python " + " ".join(sys.argv),
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
        "threads": 1,
        "batch_size": args.batch_size,
    }
    with open(args.output, "w", encoding="utf8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
