"""greenkd.Corpus.v1: spaCy's Corpus with control over what gold annotation the
predicted docs start with.

The biaffine parser paper parses gold tokens with gold sentence boundaries and gold
UPOS ("paper setting"). spaCy's own reader re-tokenizes the text unless gold_preproc
is set, and never copies POS. This reader keeps spaCy's Corpus for reading and
shuffling and only changes the predicted side of each Example:
- gold_tokens: the predicted doc has the reference's words and spaces;
- gold_sents: ... and its sentence boundaries;
- gold_pos: ... and its UPOS (the paper setting; off for the realistic setting, where
  POS comes from a tagger listed in [training] annotating_components, or not at all).
"""
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Corpus, Example
from spacy.util import registry

from ..errors import Errors


@registry.readers("greenkd.Corpus.v1")
def create_corpus_reader(
    path: Optional[Path],
    gold_preproc: bool = False,
    max_length: int = 0,
    limit: int = 0,
    shuffle: bool = False,
    gold_tokens: bool = True,
    gold_sents: bool = True,
    gold_pos: bool = False,
) -> Callable[[Language], Iterable[Example]]:
    """Read .spacy files and seed the predicted docs with chosen gold annotation.

    path (Optional[Path]): A .spacy file or a directory of them.
    gold_preproc (bool): One example per gold sentence, as in spaCy's Corpus.
    max_length (int): Split longer docs into sentences (0: no limit).
    limit (int): Read at most this many docs (0: all).
    shuffle (bool): Shuffle the docs.
    gold_tokens (bool): Use the reference tokenization instead of the tokenizer's.
    gold_sents (bool): Copy the reference sentence boundaries (needs gold_tokens).
    gold_pos (bool): Copy the reference UPOS (needs gold_tokens): the paper setting.
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader.
    """
    if path is None or not Path(path).exists():
        raise ValueError(Errors.E004.format(path=path))
    corpus = Corpus(
        path, gold_preproc=gold_preproc, max_length=max_length, limit=limit, shuffle=shuffle
    )
    return GoldSeededCorpus(corpus, gold_tokens, gold_sents, gold_pos)


class GoldSeededCorpus:
    def __init__(self, corpus: Corpus, gold_tokens: bool, gold_sents: bool, gold_pos: bool):
        self.corpus = corpus
        self.gold_tokens = gold_tokens or gold_sents or gold_pos
        self.gold_sents = gold_sents
        self.gold_pos = gold_pos

    def __call__(self, nlp: Language) -> Iterator[Example]:
        for eg in self.corpus(nlp):
            if not self.gold_tokens:
                yield eg
                continue
            ref = eg.reference
            sent_starts = None
            if self.gold_sents and ref.has_annotation("SENT_START"):
                sent_starts = [bool(token.is_sent_start) for token in ref]
            pos = None
            if self.gold_pos and ref.has_annotation("POS"):
                pos = [token.pos_ or None for token in ref]
            predicted = Doc(
                nlp.vocab,
                words=[token.text for token in ref],
                spaces=[bool(token.whitespace_) for token in ref],
                sent_starts=sent_starts,
                pos=pos,
            )
            yield Example(predicted, ref)
