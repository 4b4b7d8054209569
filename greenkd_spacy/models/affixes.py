"""greenkd.affix_lengths.v1: how many characters spaCy's PREFIX and SUFFIX features keep.

Why: spaCy's hash embeddings (spacy.MultiHashEmbed.v2) read a word's PREFIX (its first
character) and SUFFIX (its last three), lengths fixed by the language's lexical attribute
getters. In an agglutinative language such as Tamil a case or tense ending is often
longer than three characters (the locative "த்தில்" is six code points), and the ending
is what decides a word's dependency label. This `[nlp] after_creation` callback sets
other lengths for the vocab's lexemes, so the same embedding layers see longer affixes;
no other feature, and no other pipeline, changes (unless it shares this vocab). It is in
the config, so `spacy.load` sets the same lengths again and a saved pipeline reads what
it was trained on; a component trained with it and sourced into a pipeline without it
would read spaCy's lengths. On Tamil-TTB five-character suffixes parsed worse than
spaCy's three (docs/benchmarks.md), so no shipped config sets it.
"""
from typing import Callable

from spacy.attrs import PREFIX, SUFFIX
from spacy.language import Language
from spacy.util import registry


class _Prefix:
    """The first n characters (a class, not a lambda, so the vocab can be pickled for
    nlp.pipe(n_process=...))."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, string: str) -> str:
        return string[: self.n]


class _Suffix:
    """The last n characters."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, string: str) -> str:
        return string[-self.n:]


@registry.callbacks("greenkd.affix_lengths.v1")
def create_affix_lengths(prefix: int = 1, suffix: int = 3) -> Callable[[Language], Language]:
    """Create an `[nlp] after_creation` callback that makes PREFIX the first `prefix`
    characters of a word and SUFFIX its last `suffix` (spaCy's defaults: 1 and 3).

    prefix (int): Characters kept from the start of a word, >= 1.
    suffix (int): Characters kept from the end of a word, >= 1.
    """
    if prefix < 1 or suffix < 1:
        raise ValueError(
            f"(greenkd-spacy) greenkd.affix_lengths.v1 got prefix = {prefix}, suffix = {suffix} in "
            "[nlp.after_creation]: both are numbers of characters, use values >= 1 (spaCy's own are 1 and 3)."
        )

    def set_affix_lengths(nlp: Language) -> Language:
        get_prefix, get_suffix = _Prefix(prefix), _Suffix(suffix)
        nlp.vocab.lex_attr_getters = {**nlp.vocab.lex_attr_getters, PREFIX: get_prefix, SUFFIX: get_suffix}
        # Lexemes made before this ran (the tokenizer's special cases) get the new lengths too.
        for lexeme in nlp.vocab:
            lexeme.prefix_ = get_prefix(lexeme.orth_)
            lexeme.suffix_ = get_suffix(lexeme.orth_)
        return nlp

    return set_affix_lengths
