# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Viterbi for the linear-chain CRF in compiled loops, visiting only the transitions
the tag scheme allows.

The torch version (`LinearChainCRF.viterbi`, the reference it is tested against) adds
every pair of tags at every step: 73 x 73 for the BILUO tags of spaCy's 18 English
entity types, a (sentences, 73, 73) tensor written and reduced per token, which made
decoding seven times the cost of greenkd_ner's network. Of those pairs BILUO allows
about a quarter (into I-X and L-X only from B-X and I-X); a forbidden transition scores
-1e4 in the reference and can never be the best, so skipping it gives the same paths.
Ties go to the lowest previous tag, as torch's max does.
"""
from libc.stdint cimport int64_t

import numpy


def viterbi_batch(
    const float[:, :, ::1] emissions,
    const int64_t[::1] lengths,
    const float[:, ::1] into,
    const float[::1] start,
    const float[::1] end,
    const int64_t[:, ::1] allowed,
    const int64_t[::1] n_allowed,
):
    """Best tag sequence of each sequence of the batch, as an int64 (B, L) array
    (positions past a sequence's length are 0).

    emissions: (B, L, C) scores; lengths: (B,); into[next, prev]: the transition score;
    start, end: (C,); allowed[next, :n_allowed[next]]: the previous tags visited."""
    cdef Py_ssize_t batch = emissions.shape[0], max_len = emissions.shape[1], n_tags = emissions.shape[2]
    tags_array = numpy.zeros((batch, max_len), dtype=numpy.int64)
    cdef int64_t[:, ::1] tags = tags_array
    cdef float[::1] score = numpy.empty(n_tags, dtype=numpy.float32)
    cdef float[::1] new = numpy.empty(n_tags, dtype=numpy.float32)
    cdef int64_t[:, ::1] back = numpy.zeros((max(max_len, 1), n_tags), dtype=numpy.int64)
    cdef Py_ssize_t b, t, j, k, i, n, arg
    cdef float best, value
    with nogil:
        for b in range(batch):
            n = lengths[b]
            if n <= 0:
                continue
            for j in range(n_tags):
                score[j] = start[j] + emissions[b, 0, j]
            for t in range(1, n):
                for j in range(n_tags):
                    arg = allowed[j, 0]
                    best = score[arg] + into[j, arg]
                    for k in range(1, n_allowed[j]):
                        i = allowed[j, k]
                        value = score[i] + into[j, i]
                        if value > best:
                            best = value
                            arg = i
                    new[j] = best + emissions[b, t, j]
                    back[t, j] = arg
                for j in range(n_tags):
                    score[j] = new[j]
            arg = 0
            best = score[0] + end[0]
            for j in range(1, n_tags):
                value = score[j] + end[j]
                if value > best:
                    best = value
                    arg = j
            tags[b, n - 1] = arg
            for t in range(n - 1, 0, -1):
                arg = back[t, arg]
                tags[b, t - 1] = arg
    return tags_array
