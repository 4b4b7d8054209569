"""Word embeddings seeded from static vectors: greenkd.NgramCNN.v1's words_from_vectors.

A convolution trained on a few thousand labelled texts meets most words a handful of
times; vectors trained on far more text (spaCy's en_core_web_md, or those made from the
teacher with `spacy greenkd-static-vectors`) start each word near words of similar use.
The vectors are reduced to the embedding width by their principal components, scaled to
the spread of the random rows they replace, and then train as any other row: nothing is
looked up at inference.
"""
import numpy
import torch
from spacy.strings import get_string_id
from spacy.vectors import Vectors

from .ngrams import NgramTable

# The standard deviation of WordCNN's random rows, which the seeded rows match.
ROW_STD = 0.1


def seed_from_vectors(embed: torch.nn.Embedding, table: NgramTable, vectors: Vectors) -> int:
    """Overwrite the rows of the table's words that have a vector (found by the word's
    text as the table holds it) with the vectors' principal components.
    RETURNS (int): The number of words seeded."""
    word_rows = table.word_rows()
    found_rows, vector_rows = [], []
    for row, gram in enumerate(table.ngrams):
        if " " in gram:
            continue
        at = vectors.key2row.get(get_string_id(gram), -1)
        if at >= 0:
            found_rows.append(word_rows[row])
            vector_rows.append(at)
    if len(vector_rows) < 2:
        return 0
    data = numpy.asarray(vectors.data, dtype="float32")[numpy.asarray(vector_rows)]
    data = data - data.mean(axis=0)
    width = embed.weight.shape[1]
    _, _, components = numpy.linalg.svd(data, full_matrices=False)
    projected = data @ components[:width].T
    if projected.shape[1] < width:  # fewer dimensions than the embedding: the rest stay random
        projected = numpy.hstack([projected, embed.weight.detach().numpy()[found_rows, projected.shape[1]:]])
    projected *= ROW_STD / max(float(projected.std()), 1e-8)
    with torch.no_grad():
        embed.weight[torch.as_tensor(found_rows)] = torch.from_numpy(projected.astype("float32"))
    return len(found_rows)
