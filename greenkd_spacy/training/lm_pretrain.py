"""Pretraining LD-Net's densely connected LM on raw text, in the manner of `spacy pretrain`.

Text is streamed (plain text or JSONL, gzip or not, any size), tokenized with the
pipeline language's tokenizer, so the LM's words are the labeller's tokens. A first pass
counts words for the frequency-sorted vocabulary the adaptive softmax needs; training
then streams the corpus again, epoch after epoch, in batches of token chunks.

Output directory: ``model-last/`` (and ``model-best/``, lowest held-out loss), each with
``lm_config.json`` (shapes + vocabulary), ``weights.pt`` (torch state dict, loaded with
``weights_only=True``) and ``state.json``; ``optimizer.pt`` in model-last for resuming.
Every checkpoint is written to a temporary directory and renamed into place.
"""
import itertools
import json
import math
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, Optional, Sequence

import spacy
import torch
from tqdm import tqdm

from ..checkpoint import BEST, LAST, resume_state, save_checkpoint
from ..models.pytorch.dense_lm import PAPER_LM, DenseLM, LMShape
from ..data.text_corpus import iter_texts

SPECIALS = ["<unk>", "<s>"]
STATE_FILE = "state.json"


def token_stream(path: Path, lang: str, limit: int = 0) -> Iterator[List[str]]:
    """Each text's tokens (the spaCy tokenizer of `lang`), streamed."""
    nlp = spacy.blank(lang)
    for doc in nlp.tokenizer.pipe(iter_texts(path, limit=limit), batch_size=1000):
        words = [t.text for t in doc if not t.is_space]
        if words:
            yield words


def build_vocab(path: Path, lang: str, size: int, limit: int = 0) -> List[str]:
    """The `size` most frequent words (ties by first occurrence), after the specials."""
    counts: Counter = Counter()
    for words in tqdm(token_stream(path, lang, limit), desc="counting words", unit="text", file=sys.stderr):
        counts.update(words)
    return SPECIALS + [w for w, _ in counts.most_common(max(0, size - len(SPECIALS)))]


def chunked(words: Sequence[int], length: int) -> Iterator[Sequence[int]]:
    for start in range(0, len(words), length):
        yield words[start : start + length]


def batches(path: Path, lang: str, index: Dict[str, int], batch_size: int, seq_length: int, limit: int, skip_texts: int = 0) -> Iterator[List[Sequence[int]]]:
    """Batches of id chunks (at most seq_length each) over one pass of the corpus."""
    batch: List[Sequence[int]] = []
    stream = itertools.islice(token_stream(path, lang, limit), skip_texts, None)
    for words in stream:
        for chunk in chunked([index.get(w, 0) for w in words], seq_length):
            batch.append(chunk)
            if len(batch) == batch_size:
                yield batch
                batch = []
    if batch:
        yield batch


def to_tensors(batch: List[Sequence[int]]):
    lengths = torch.tensor([len(c) for c in batch], dtype=torch.long)
    ids = torch.zeros((len(batch), int(lengths.max())), dtype=torch.long)
    for i, chunk in enumerate(batch):
        ids[i, : len(chunk)] = torch.tensor(chunk, dtype=torch.long)
    return ids, lengths


def save_lm(directory: Path, lm: DenseLM, config: Dict[str, Any], state: Dict[str, Any], optimizer: Optional[torch.optim.Optimizer] = None) -> None:
    """The LM, its config, the optimizer (model-last only) and the step, swapped in
    together (checkpoint.py)."""

    def write_files(tmp: Path) -> None:
        tmp.mkdir()
        (tmp / "lm_config.json").write_text(json.dumps(config), encoding="utf8")
        torch.save(lm.state_dict(), tmp / "weights.pt")
        if optimizer is not None:
            torch.save(optimizer.state_dict(), tmp / "optimizer.pt")

    save_checkpoint(directory, write_files, state, STATE_FILE)


def evaluate(lm: DenseLM, held_out: List[List[Sequence[int]]]) -> float:
    lm.eval()
    with torch.no_grad():
        losses = [float(lm.lm_loss(*to_tensors(batch))) for batch in held_out]
    lm.train()
    return sum(losses) / max(1, len(losses))


def pretrain_lm(
    text_path: Path,
    output: Path,
    *,
    lang: str = "en",
    shape: LMShape = PAPER_LM,
    batch_size: int = 128,
    seq_length: int = 20,
    learn_rate: float = 1e-3,
    grad_clip: float = 5.0,
    max_steps: int = 10000,
    eval_every: int = 500,
    held_out_batches: int = 20,
    limit: int = 0,
    seed: int = 0,
    resume: bool = True,
    stderr: IO = sys.stderr,
) -> Dict[str, Any]:
    """Train the forward and backward dense LMs; defaults are the paper's LM (`shape`:
    dense_lm.PAPER_LM; Adam lr 1e-3, clip 5, batch 128, 20-step chunks). RETURNS the
    final state (step, losses, time)."""
    torch.manual_seed(seed)
    last = output / LAST
    saved = resume_state(output, STATE_FILE) if resume else None
    state: Dict[str, Any]
    if saved is not None:
        config = json.loads((last / "lm_config.json").read_text(encoding="utf8"))
        state = saved
        stderr.write(f"Resuming LM pretraining from {last} at step {state['step']}\n")
    else:
        vocab = build_vocab(text_path, lang, shape.vocab_size, limit)
        config = {"vocab": vocab, "lang": lang, **asdict(shape), "cutoffs": list(shape.cutoffs)}
        del config["vocab_size"]  # the vocabulary itself says it
        state = {"step": 0, "epoch": 0, "batches_done": 0, "best_loss": None, "history": [], "seconds": 0.0}
    from ..models.labeller import build_lm  # one place builds an LM from its config

    lm = build_lm(config)
    optimizer = torch.optim.Adam([p for p in lm.parameters() if p.requires_grad], lr=learn_rate)
    if state["step"]:
        lm.load_state_dict(torch.load(last / "weights.pt", map_location="cpu", weights_only=True))
        if (last / "optimizer.pt").exists():
            optimizer.load_state_dict(torch.load(last / "optimizer.pt", map_location="cpu", weights_only=True))
    index = {w: i for i, w in enumerate(config["vocab"])}
    # The first batches of the corpus are held out for the loss that picks model-best.
    held_out = list(itertools.islice(batches(text_path, lang, index, batch_size, seq_length, limit), held_out_batches))
    n_held_texts = sum(len(b) for b in held_out)  # chunks, an upper bound on texts
    lm.train()
    start = time.perf_counter() - state["seconds"]
    bar = tqdm(total=max_steps, initial=state["step"], desc="LM pretraining", unit="step", file=stderr)
    running: List[float] = []
    while state["step"] < max_steps:
        stream = batches(text_path, lang, index, batch_size, seq_length, limit, skip_texts=0)
        stream = itertools.islice(stream, held_out_batches, None)
        seen = 0
        for batch in stream:
            seen += 1
            if seen <= state["batches_done"]:  # resume inside an epoch: skip what was trained
                continue
            loss = lm.lm_loss(*to_tensors(batch))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(lm.parameters(), grad_clip)
            optimizer.step()
            running.append(float(loss.detach()))
            state["step"] += 1
            state["batches_done"] = seen
            bar.update(1)
            bar.set_postfix(loss=f"{sum(running[-50:]) / len(running[-50:]):.3f}")
            if state["step"] % eval_every == 0 or state["step"] >= max_steps:
                held = evaluate(lm, held_out) if held_out else float("nan")
                state["seconds"] = time.perf_counter() - start
                state["history"].append({"step": state["step"], "train_loss": sum(running) / len(running), "held_out_loss": held, "ppl": math.exp(min(held, 50))})
                running = []
                save_lm(last, lm, config, state, optimizer)
                if state["best_loss"] is None or held < state["best_loss"]:
                    state["best_loss"] = held
                    save_lm(output / BEST, lm, config, state)
            if state["step"] >= max_steps:
                break
        else:
            state["epoch"] += 1
            state["batches_done"] = 0
            if seen == 0:
                raise ValueError(f"(greenkd-spacy) {text_path} has no text beyond the {n_held_texts} held-out chunks; give the LM more text.")
    bar.close()
    return state
