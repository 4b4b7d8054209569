"""Sentence-level transfer text from long unlabeled documents.

The transfer set should look like the texts the student will classify (the paper pairs
each task with an in-domain corpus, section 3.1: 75M Amazon reviews for SST-2). SST-2 is
single sentences, lowercased and tokenised; the review-domain text available offline in
quantity (IMDB's 50,000 unlabeled reviews) comes as whole reviews with HTML line breaks.
A whole review costs the teacher ~10x a sentence and gives the DAN a mean over hundreds
of words, so the reviews are cut into sentences and written the way SST-2 is.
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
