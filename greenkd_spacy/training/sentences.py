"""Sentence-level transfer text from long unlabeled documents.

A student is distilled on the kind of text it will classify. SST-2 is single sentences,
lowercased and tokenised; review-domain unlabeled text in quantity (IMDB's 50,000
unlabeled reviews) comes as whole reviews with HTML line breaks. Labelling whole
reviews would cost the teacher ~10x per text and give the DAN averages over hundreds of
words, so the reviews are cut into sentences and written the way the task's texts look
(the paper's SST-2 transfer set is sentences of Amazon/IMDB reviews, section 3.1).
"""
import re
from typing import Iterable, Iterator

from spacy.language import Language

_MARKUP = re.compile(r"<[^>]{0,40}>")


def strip_markup(text: str) -> str:
    """Replace HTML tags (IMDB's `<br />`) by a space."""
    return _MARKUP.sub(" ", text)


def iter_sentences(
    nlp: Language,
    texts: Iterable[str],
    *,
    lowercase: bool = True,
    min_words: int = 3,
    max_words: int = 60,
    batch_size: int = 256,
) -> Iterator[str]:
    """Sentences of `texts` as space-joined tokens, one string each.

    nlp (Language): A pipeline that sets sentence boundaries (e.g. blank + sentencizer).
    lowercase (bool): Lowercase the output, as GLUE's SST-2 is.
    min_words / max_words (int): Drop sentences with fewer / more tokens (headings,
        run-on lists that the sentencizer did not split).
    """
    if min_words < 1 or max_words < min_words:
        raise ValueError(f"(greenkd-spacy) need 1 <= min_words <= max_words, got {min_words} and {max_words}.")
    for doc in nlp.pipe((strip_markup(t) for t in texts), batch_size=batch_size):
        for sent in doc.sents:
            words = [t.text for t in sent if not t.is_space]
            if min_words <= len(words) <= max_words:
                line = " ".join(words)
                yield line.lower() if lowercase else line
