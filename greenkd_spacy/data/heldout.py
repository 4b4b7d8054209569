"""Held-out splits of labeled text that do not leak into training.

GLUE's SST-2 training set labels every phrase of its sentences: "a gorgeous , witty ,
seductive movie ." and also "witty , seductive movie" and "seductive". Holding out a
random 5 % of those phrases (as `greenkd-convert-textcat --dev-fraction` does) left 88 %
of the held-out phrases verbatim inside a training phrase, so the held-out score
measured memorisation (92 % for a DAN that reaches 79 % on unseen sentences) and chose
`model-best` and configs by it. `whole_text_split` holds out whole texts instead, the
ones no other text contains, and leaves every text they contain out of training.
"""
import random
from typing import List, Sequence, Set, Tuple


def contained_texts(words: Sequence[Tuple[str, ...]], within: Sequence[int]) -> Set[int]:
    """Indices of the texts that occur as a proper contiguous run of words inside one of
    the texts ``within`` (duplicates of a text count as inside it)."""
    index = {}
    for i, text in enumerate(words):
        index.setdefault(text, []).append(i)
    inside: Set[int] = set()
    for i in within:
        text = words[i]
        n = len(text)
        for start in range(n):
            for end in range(start + 1, n + 1):
                if end - start == n:
                    continue
                for j in index.get(text[start:end], ()):
                    inside.add(j)
        inside.update(j for j in index[text] if j != i)
    return inside


def whole_text_split(texts: Sequence[str], fraction: float, seed: int = 0) -> Tuple[List[int], List[int]]:
    """Hold out ``fraction`` of the whole texts (those no other text contains, compared
    word by word after splitting on whitespace); leave out of training every text that
    occurs inside a held-out one.

    texts (Sequence[str]): The labeled texts, in file order.
    fraction (float): Share of the whole texts to hold out, in (0, 1).
    seed (int): Seed of the random choice.
    RETURNS (Tuple[List[int], List[int]]): Indices of the held-out texts and of the
        texts left out of training (inside a held-out one), both sorted.
    """
    words = [tuple(text.split()) for text in texts]
    inside_some = contained_texts(words, range(len(words)))
    whole = [i for i in range(len(words)) if i not in inside_some and words[i]]
    random.Random(seed).shuffle(whole)
    held_out = sorted(whole[: int(round(fraction * len(whole)))])
    dropped = sorted(contained_texts(words, held_out) - set(held_out))
    return held_out, dropped
