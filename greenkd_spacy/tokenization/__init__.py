"""greenkd.WordTokenizer.v1: a tokenizer for pipelines that only classify text.

spaCy's rule tokenizer (exceptions, prefixes, suffixes, infixes, special cases) is what a
tagger or a parser needs, and on short texts it is most of a bag-of-n-grams classifier's
time: on SST-2 spaCy's tokenizer took 1.07 of the 1.22 microseconds per word of
greenkd_textcat's linear bag. A bag of n-grams needs words, not linguistic tokens, so
this tokenizer splits on whitespace and takes punctuation and symbols off the ends of
words, in one compiled pass. Its tokens are not spaCy's ("don't" stays one token), so
use it only where every component reads n-grams of words (greenkd_textcat), and train
with it: a model learns the n-grams of the tokenizer it was trained with.

In a config:

    [nlp.tokenizer]
    @tokenizers = "greenkd.WordTokenizer.v1"
"""
from pathlib import Path
from typing import Callable, Iterable, Iterator, Union

import srsly
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import ensure_path, registry
from spacy.vocab import Vocab

from .split import ascii_edge_table, split_words

try:
    from ._split import WordSplitter as _CompiledSplitter
except ImportError:  # a source tree on sys.path without `pip install` (nothing built)
    _CompiledSplitter = None

NAME = "greenkd.WordTokenizer.v1"


class WordTokenizer:
    """Whitespace-separated words with their leading and trailing punctuation and
    symbols split off (greenkd_spacy.tokenization.split.split_words has the rule)."""

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self._compiled = _CompiledSplitter(vocab, ascii_edge_table()) if _CompiledSplitter is not None else None

    def __call__(self, text: str) -> Doc:
        if not isinstance(text, str):
            raise TypeError(f"{NAME} tokenizes a str, not {type(text).__name__}: pass the text itself.")
        if self._compiled is not None:
            return self._compiled(text)
        words, spaces = split_words(text)
        return Doc(self.vocab, words=words, spaces=spaces)

    def __reduce__(self):
        # Rebuilt from its vocab: nlp.pipe(n_process=...) and spaCy's pickling of a
        # pipeline carry the tokenizer to other processes.
        return (WordTokenizer, (self.vocab,))

    def pipe(self, texts: Iterable[str], batch_size: int = 1000) -> Iterator[Doc]:
        for text in texts:
            yield self(text)

    # Nothing to save but what it is: the rule has no settings.
    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        return srsly.msgpack_dumps({"tokenizer": NAME})

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "WordTokenizer":
        self._check(srsly.msgpack_loads(bytes_data))
        return self

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        srsly.write_msgpack(ensure_path(path), {"tokenizer": NAME})

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "WordTokenizer":
        self._check(srsly.read_msgpack(ensure_path(path)))
        return self

    @staticmethod
    def _check(data: object) -> None:
        if not isinstance(data, dict) or data.get("tokenizer") != NAME:
            raise ValueError(
                f"The saved tokenizer is not {NAME}: the pipeline's config names "
                f"{NAME} under [nlp.tokenizer] but its tokenizer data was written by another "
                "tokenizer. Save the pipeline again from the config it was trained with."
            )


@registry.tokenizers(NAME)
def create_word_tokenizer() -> Callable[[Language], WordTokenizer]:
    """greenkd_spacy.tokenization.WordTokenizer for nlp.vocab."""

    def make(nlp: Language) -> WordTokenizer:
        return WordTokenizer(nlp.vocab)

    return make
