"""A synthetic transfer set for distillation when no in-domain unlabeled text exists.

The DAN paper distils TREC on 65M PAQ questions; offline we have none, and general text
(Brown, news) tells a question-type teacher little. Tang et al. (2019, "Distilling
task-specific knowledge from BERT into simple neural networks") make a transfer set from
the training set itself: per word, masking (p_mask) or replacement by another word of the
same kind (p_replace), and per variant, keeping only a random n-gram (p_ngram). The
teacher labels the variants, so they need no gold label.

Two changes for our students: a masked word is deleted (the DAN has no mask token, and
an unknown n-gram would carry no signal), and a word is replaced by one drawn from the
training words of the same casing class (lower, title, upper, digit, punctuation, other)
by frequency, because no tagger is assumed for Tang et al.'s POS-guided replacement.
"""
import random
from collections import Counter, defaultdict
from typing import Dict, Iterable, Iterator, List, Sequence, Tuple


def word_class(word: str) -> str:
    """The casing class a replacement must share with the word it replaces."""
    if word.isdigit():
        return "digit"
    if not any(c.isalnum() for c in word):
        return "punct"
    if word.islower():
        return "lower"
    if word.istitle():
        return "title"
    if word.isupper():
        return "upper"
    return "other"


class Augmenter:
    """Makes variants of tokenized texts (lists of words)."""

    def __init__(
        self,
        texts: Iterable[Sequence[str]],
        *,
        p_mask: float = 0.1,
        p_replace: float = 0.1,
        p_ngram: float = 0.25,
        max_ngram: int = 5,
        seed: int = 0,
    ):
        for name, p in (("p_mask", p_mask), ("p_replace", p_replace), ("p_ngram", p_ngram)):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"(greenkd-spacy) {name} must be in [0, 1], got {p}.")
        if p_mask + p_replace > 1.0:
            raise ValueError(f"(greenkd-spacy) p_mask + p_replace must be <= 1, got {p_mask + p_replace}.")
        self.p_mask, self.p_replace, self.p_ngram, self.max_ngram = p_mask, p_replace, p_ngram, max(1, max_ngram)
        self.rng = random.Random(seed)
        counts: Counter = Counter(w for words in texts for w in words)
        by_class: Dict[str, List[Tuple[str, int]]] = defaultdict(list)
        for word, count in sorted(counts.items()):
            by_class[word_class(word)].append((word, count))
        # Cumulative weights per class, for frequency-weighted choice.
        self.vocab = {
            cls: ([w for w, _ in items], list(_cumsum(c for _, c in items))) for cls, items in by_class.items()
        }

    def _replacement(self, word: str) -> str:
        words, cum_weights = self.vocab.get(word_class(word), ([word], [1]))
        return self.rng.choices(words, cum_weights=cum_weights, k=1)[0]

    def variant(self, words: Sequence[str]) -> List[str]:
        """One variant: words deleted or replaced, then maybe cut to a random n-gram."""
        out: List[str] = []
        for word in words:
            r = self.rng.random()
            if r < self.p_mask:
                continue
            out.append(self._replacement(word) if r < self.p_mask + self.p_replace else word)
        if out and self.rng.random() < self.p_ngram:
            n = self.rng.randint(1, min(self.max_ngram, len(out)))
            start = self.rng.randint(0, len(out) - n)
            out = out[start : start + n]
        return out

    def variants(self, words: Sequence[str], n: int, max_tries: int = 4) -> List[List[str]]:
        """Up to n distinct variants that differ from the original and are not empty."""
        seen = {tuple(words)}
        found: List[List[str]] = []
        for _ in range(n * max_tries):
            if len(found) == n:
                break
            candidate = self.variant(words)
            if candidate and tuple(candidate) not in seen:
                seen.add(tuple(candidate))
                found.append(candidate)
        return found


def _cumsum(values: Iterable[int]) -> Iterator[int]:
    total = 0
    for v in values:
        total += v
        yield total
