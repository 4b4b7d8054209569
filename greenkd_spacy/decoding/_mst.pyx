# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Chu-Liu/Edmonds in compiled loops: the same algorithm, ties and trees as
`mst._chu_liu_edmonds`, which stays as the reference it is tested against.

The numpy version spends its time in Python around small arrays (a 25-word sentence
is a 26 x 26 matrix): on a distilled student that was nearly half of greenkd_parser's
time per word on held-out text, where the greedy heads of one sentence in five hold a
cycle. Every step here is a loop over the matrix; each contraction allocates one
smaller matrix and recurses, as the reference does.
"""
from libc.stdint cimport int64_t

import numpy

cdef double NEG_INF = -1e30


def chu_liu_edmonds(double[:, ::1] scores):
    """The maximum spanning arborescence of scores[dep, head] rooted at node 0 (the
    root may have several children): heads as an int64 array, heads[0] == -1."""
    return numpy.asarray(_cle(scores))


cdef int64_t[::1] _cle(double[:, ::1] s):
    cdef Py_ssize_t n = s.shape[0]
    cdef int64_t[::1] heads = numpy.empty(n, dtype=numpy.int64)
    cdef Py_ssize_t i, j, k, a, b, m, n_cyc, node
    cdef double best, value, total
    heads[0] = -1
    for i in range(1, n):
        best = s[i, 0]
        k = 0
        for j in range(1, n):
            if s[i, j] > best:
                best = s[i, j]
                k = j
        heads[i] = k
    cdef int64_t[::1] cycle = _find_cycle(heads)
    n_cyc = cycle.shape[0]
    if n_cyc == 0:
        return heads
    cdef char[::1] in_cycle = numpy.zeros(n, dtype=numpy.int8)
    for k in range(n_cyc):
        in_cycle[cycle[k]] = 1
    # Both in increasing node order, as numpy.flatnonzero gives them.
    cdef int64_t[::1] cyc = numpy.empty(n_cyc, dtype=numpy.int64)
    cdef int64_t[::1] rest = numpy.empty(n - n_cyc, dtype=numpy.int64)
    a = 0
    b = 0
    for i in range(n):
        if in_cycle[i]:
            cyc[a] = i
            a += 1
        else:
            rest[b] = i
            b += 1
    m = n - n_cyc
    cdef double[::1] cycle_arc = numpy.empty(n_cyc, dtype=numpy.float64)
    total = 0.0
    for k in range(n_cyc):
        cycle_arc[k] = s[cyc[k], heads[cyc[k]]]
        total += cycle_arc[k]
    cdef double[:, ::1] contracted = numpy.empty((m + 1, m + 1), dtype=numpy.float64)
    cdef int64_t[::1] leave_head = numpy.zeros(m, dtype=numpy.int64)
    cdef int64_t[::1] enter_dep = numpy.zeros(m, dtype=numpy.int64)
    for a in range(m):
        for b in range(m):
            contracted[a, b] = s[rest[a], rest[b]]
        # The cycle as head of rest[a]: its best node.
        best = s[rest[a], cyc[0]]
        k = 0
        for j in range(1, n_cyc):
            if s[rest[a], cyc[j]] > best:
                best = s[rest[a], cyc[j]]
                k = j
        leave_head[a] = k
        contracted[a, m] = best
    for b in range(m):
        # rest[b] as head of the cycle: break it where entering gains most.
        best = s[cyc[0], rest[b]] - cycle_arc[0]
        k = 0
        for j in range(1, n_cyc):
            value = s[cyc[j], rest[b]] - cycle_arc[j]
            if value > best:
                best = value
                k = j
        enter_dep[b] = k
        contracted[m, b] = best + total
    for b in range(m + 1):
        contracted[0, b] = NEG_INF
        contracted[b, b] = NEG_INF
    cdef int64_t[::1] sub = _cle(contracted)
    cdef int64_t[::1] result = numpy.array(heads, dtype=numpy.int64)
    for i in range(1, m):
        if sub[i] == m:
            result[rest[i]] = cyc[leave_head[i]]
        else:
            result[rest[i]] = rest[sub[i]]
    node = sub[m]
    result[cyc[enter_dep[node]]] = rest[node]
    return result


cdef int64_t[::1] _find_cycle(int64_t[::1] heads):
    """The nodes of one cycle, in the order the reference's find_cycle walks them
    (empty when there is none)."""
    cdef Py_ssize_t n = heads.shape[0]
    cdef char[::1] state = numpy.zeros(n, dtype=numpy.int8)
    cdef int64_t[::1] path = numpy.empty(n, dtype=numpy.int64)
    cdef Py_ssize_t start, node, length, k, first
    state[0] = 2
    for start in range(1, n):
        if state[start]:
            continue
        length = 0
        node = start
        while state[node] == 0:
            state[node] = 1
            path[length] = node
            length += 1
            node = heads[node]
        if state[node] == 1:
            first = 0
            while path[first] != node:
                first += 1
            return numpy.array(path[first:length], dtype=numpy.int64)
        for k in range(length):
            state[path[k]] = 2
    return numpy.empty(0, dtype=numpy.int64)
