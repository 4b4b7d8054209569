# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The DAN's n-gram featurization of a batch of docs, in one compiled pass.

`NgramTable.batch_ids` in numpy needs one `Doc.to_array` call per doc to read the
tokens' word ids, ~2.7 microseconds a call whatever the doc's length: on SST-2's short
sentences that alone was more than half of the featurization and kept the text
classifier under its 1.5x speed target against spaCy's bag-of-words model. Here each
doc's tokens are read straight from its token array, and the n-gram keys are mixed and
looked up in the `KeyIndex` table in the same loop. The keys, the table and the order
of the ids (per doc: by n-gram length, then by position) are exactly the numpy
version's, which stays as the reference it is tested against.
"""
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc
from spacy.attrs cimport IS_SPACE
from spacy.structs cimport LexemeC
from spacy.tokens.doc cimport Doc
from spacy.typedefs cimport flags_t

import numpy

# Must equal ngrams._MIX: the key of an n-gram is k = h(w1), then k = k * MIX + h(w).
cdef uint64_t MIX = 0x9E3779B97F4A7C15ULL


def batch_rows(
    docs,
    bint lowercase,
    int n_min,
    int n_max,
    const uint64_t[::1] table_keys,
    const int32_t[::1] table_rows,
):
    """Flat table rows of the docs' known n-grams and each doc's offset into them.

    docs (Sequence[Doc]): The batch.
    lowercase (bool): Words are the tokens' LOWER ids (else ORTH); space tokens are skipped.
    n_min, n_max (int): The n-gram lengths.
    table_keys, table_rows: `KeyIndex.keys` / `.rows` (power-of-two size, -1 = empty slot).
    RETURNS (Tuple[ndarray, ndarray]): int64 ids and int64 offsets (one per doc).
    """
    cdef Py_ssize_t n_docs = len(docs)
    cdef Py_ssize_t total = 0, longest = 0, span = max(0, n_max - n_min + 1)
    cdef Doc doc
    for obj in docs:
        doc = <Doc?>obj  # a clear TypeError for anything else
        total += doc.length
        longest = max(longest, <Py_ssize_t>doc.length)
    offsets = numpy.zeros(n_docs, dtype="int64")
    ids = numpy.empty(max(1, total * span), dtype="int64")  # at most `span` n-grams per word
    cdef int64_t[::1] out_offsets = offsets
    cdef int64_t[::1] out = ids
    cdef uint64_t size_mask = table_keys.shape[0] - 1
    cdef flags_t space_flag = (<flags_t>1) << IS_SPACE
    cdef uint64_t* words = <uint64_t*>malloc(max(1, longest) * sizeof(uint64_t))
    if words == NULL:
        raise MemoryError()
    cdef Py_ssize_t d = 0, n_out = 0, n_words, i, j, n
    cdef const LexemeC* lex
    cdef uint64_t key, slot
    cdef int32_t row
    try:
        for obj in docs:
            doc = <Doc>obj
            out_offsets[d] = n_out
            d += 1
            n_words = 0
            for i in range(doc.length):
                lex = doc.c[i].lex
                if lex.flags & space_flag:
                    continue
                words[n_words] = lex.lower if lowercase else lex.orth
                n_words += 1
            for n in range(n_min, n_max + 1):
                for i in range(n_words - n + 1):
                    key = words[i]
                    for j in range(i + 1, i + n):
                        key = key * MIX + words[j]
                    slot = key & size_mask
                    while True:  # linear probing, as KeyIndex.lookup
                        row = table_rows[slot]
                        if row < 0:
                            break
                        if table_keys[slot] == key:
                            out[n_out] = row
                            n_out += 1
                            break
                        slot = (slot + 1) & size_mask
    finally:
        free(words)
    return ids[:n_out].copy(), offsets


def batch_word_keys(docs):
    """Every token's ORTH and LOWER ids, the docs one after another, in one pass.

    What the static-vector mean of `greenkd.DAN.v3` / `greenkd.NgramLinear.v2` looks
    up; `Doc.to_array` per doc would cost more than the lookup itself on short texts.

    docs (Sequence[Doc]): The batch.
    RETURNS (ndarray): uint64 array of shape (total tokens, 2): ORTH, LOWER.
    """
    cdef Py_ssize_t total = 0
    cdef Doc doc
    for obj in docs:
        doc = <Doc?>obj
        total += doc.length
    keys = numpy.empty((total, 2), dtype="uint64")
    cdef uint64_t[:, ::1] out = keys
    cdef Py_ssize_t n = 0, i
    cdef const LexemeC* lex
    for obj in docs:
        doc = <Doc>obj
        for i in range(doc.length):
            lex = doc.c[i].lex
            out[n, 0] = lex.orth
            out[n, 1] = lex.lower
            n += 1
    return keys
