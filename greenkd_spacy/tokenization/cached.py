"""greenkd.CachedTokenizer.v1: spaCy's rule tokenizer, its tokens exactly, faster.

A pipeline's tokenizer runs on every text, and on short texts it is most of a light
pipeline's time (on SST-2, 1.07 of the 1.22 microseconds per word of greenkd_textcat's
linear bag). This tokenizer wraps the language's own spaCy tokenizer (the same rules,
exceptions and special cases, saved and loaded in spaCy's format) and puts a cache of
whitespace-separated chunks in front of it (_chunks.pyx says why that is faster): the
tokens are the same as spaCy's, so any component, trained with either, reads them.

In a config:

    [nlp.tokenizer]
    @tokenizers = "greenkd.CachedTokenizer.v1"

Changing the rules through this object (`add_special_case`, setting `rules`,
`prefix_search`, ... or loading other tokenizer data) empties the cache. Changing them
on the wrapped tokenizer itself (`.tokenizer`) does not: call `clear_cache()` then.
"""
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Union

from spacy.language import Language
from spacy.tokenizer import Tokenizer
from spacy.tokens import Doc
from spacy.util import registry

try:
    from ._chunks import ChunkCache
except ImportError:  # a source tree on sys.path without `pip install` (nothing built)
    ChunkCache = None

NAME = "greenkd.CachedTokenizer.v1"

# spaCy tokenizer attributes that change what a chunk's tokens are
RULE_ATTRIBUTES = frozenset(
    ["rules", "prefix_search", "suffix_search", "infix_finditer", "token_match", "url_match", "faster_heuristics"]
)


class CachedTokenizer:
    """spaCy's `tokenizer` with a chunk cache in front of it. Everything but calling
    it (explain, the rules, serialization) is the wrapped tokenizer's."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(
                f"{NAME} wraps spaCy's rule tokenizer (spacy.tokenizer.Tokenizer), not "
                f"{type(tokenizer).__name__}: a custom tokenizer has no chunk rule to cache."
            )
        object.__setattr__(self, "tokenizer", tokenizer)
        object.__setattr__(self, "_cache", ChunkCache(tokenizer.vocab, tokenizer) if ChunkCache is not None else None)

    def __call__(self, text: str) -> Doc:
        if not isinstance(text, str):
            raise TypeError(f"{NAME} tokenizes a str, not {type(text).__name__}: pass the text itself.")
        if self._cache is None:
            return self.tokenizer(text)
        return self._cache(text)

    def pipe(self, texts: Iterable[str], batch_size: int = 1000) -> Iterator[Doc]:
        for text in texts:
            yield self(text)

    def clear_cache(self) -> None:
        """Forget every remembered chunk (after changing the wrapped tokenizer's rules)."""
        if self._cache is not None:
            self._cache.clear()

    @property
    def cached_chunks(self) -> int:
        return len(self._cache) if self._cache is not None else 0

    def add_special_case(self, string: str, substrings: List[Dict[Any, Any]]) -> None:
        self.tokenizer.add_special_case(string, substrings)
        self.clear_cache()

    def __getattr__(self, name: str) -> Any:
        # only reached for names this class does not have: vocab, explain, rules, ...
        return getattr(self.tokenizer, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in RULE_ATTRIBUTES:
            setattr(self.tokenizer, name, value)
            self.clear_cache()
        else:
            object.__setattr__(self, name, value)

    def __reduce__(self):
        # nlp.pipe(n_process=...) and pickling a pipeline carry the tokenizer along
        return (CachedTokenizer, (self.tokenizer,))

    # spaCy's tokenizer data, so that a pipeline saved with either tokenizer loads with either
    def to_bytes(self, **kwargs: Any) -> bytes:
        return self.tokenizer.to_bytes(**kwargs)

    def from_bytes(self, bytes_data: bytes, **kwargs: Any) -> "CachedTokenizer":
        self.tokenizer.from_bytes(bytes_data, **kwargs)
        self.clear_cache()
        return self

    def to_disk(self, path: Union[str, Path], **kwargs: Any) -> None:
        self.tokenizer.to_disk(path, **kwargs)

    def from_disk(self, path: Union[str, Path], **kwargs: Any) -> "CachedTokenizer":
        self.tokenizer.from_disk(path, **kwargs)
        self.clear_cache()
        return self


@registry.tokenizers(NAME)
def create_cached_tokenizer() -> Callable[[Language], CachedTokenizer]:
    """The language's spaCy tokenizer (as spacy.Tokenizer.v1 makes it) in a CachedTokenizer."""
    make_spacy_tokenizer = registry.tokenizers.get("spacy.Tokenizer.v1")()

    def make(nlp: Language) -> CachedTokenizer:
        return CachedTokenizer(make_spacy_tokenizer(nlp))

    return make
