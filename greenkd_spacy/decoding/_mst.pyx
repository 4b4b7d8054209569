# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Chu-Liu/Edmonds in compiled loops: the same algorithm, ties and trees as
`mst._chu_liu_edmonds`, which stays as the reference it is tested against.

The numpy version spends its time in Python around small arrays (a 25-word sentence
is a 26 x 26 matrix): on a distilled student that was nearly half of greenkd_parser's
time per word on held-out text, where the greedy heads of one sentence in five hold a
cycle. Every step here is a loop over a C array; each contraction allocates one
smaller matrix and recurses, as the reference does, with malloc rather than numpy (a
numpy allocation per step cost more than the step).
"""
from libc.math cimport isfinite
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc

import numpy

cdef double NEG_INF = -1e30


def chu_liu_edmonds(double[:, ::1] scores):
    """The maximum spanning arborescence of scores[dep, head] rooted at node 0 (the
    root may have several children): heads as an int64 array, heads[0] == -1."""
    cdef Py_ssize_t n = scores.shape[0]
    heads_array = numpy.empty(n, dtype=numpy.int64)
    cdef int64_t[::1] heads = heads_array
    work_array = numpy.array(scores, dtype=numpy.float64)
    cdef double[:, ::1] work = work_array
    if n > 0:
        if _cle(&work[0, 0], n, &heads[0]) != 0:
            raise MemoryError()
    return heads_array


def decode_padded(double[:, :, ::1] arc_scores, int64_t[::1] lengths):
    """`mst.decode_batch` in one compiled loop: for each sentence s of the padded
    batch, the best single-rooted tree over arc_scores[s, :n, :n + 1] (dependent i,
    head j, 0 = root), built exactly as `mst.mst_decode` builds it (forbidden and
    non-finite arcs at NEG_INF, the greedy heads when they already form a single-rooted
    tree, else Chu-Liu/Edmonds with the root arcs lowered by one constant). Per
    sentence, the Python version's dozen small numpy calls cost more than the decoding.
    RETURNS: int64 array (S, L) of heads in 0..L, -1 on padding."""
    cdef Py_ssize_t n_sents = arc_scores.shape[0], max_len = arc_scores.shape[1]
    out_array = numpy.full((n_sents, max_len), -1, dtype=numpy.int64)
    cdef int64_t[:, ::1] out = out_array
    cdef Py_ssize_t s, n, i, j, k, roots, w
    cdef double value, best, low, high, penalty
    cdef int status = 0
    # One matrix, head array and cycle-search scratch for the whole batch.
    cdef double* work = <double*>malloc((max_len + 1) * (max_len + 1) * sizeof(double))
    cdef int64_t* heads = <int64_t*>malloc((max_len + 1) * sizeof(int64_t))
    cdef char* state = <char*>malloc((max_len + 1) * sizeof(char))
    cdef int64_t* path = <int64_t*>malloc((max_len + 1) * sizeof(int64_t))
    if work == NULL or heads == NULL or state == NULL or path == NULL:
        free(work)
        free(heads)
        free(state)
        free(path)
        raise MemoryError()
    try:
        for s in range(n_sents):
            n = lengths[s]
            if n <= 0:
                continue
            w = n + 1
            heads[0] = -1
            roots = 0
            for j in range(w):
                work[j] = NEG_INF
            for i in range(1, w):
                best = NEG_INF
                k = 0
                for j in range(w):
                    value = arc_scores[s, i - 1, j]
                    if i == j or not isfinite(value) or value < NEG_INF:
                        value = NEG_INF
                    work[i * w + j] = value
                    if value > best:
                        best = value
                        k = j
                heads[i] = k
                if k == 0:
                    roots += 1
            if roots != 1 or _find_cycle(heads, w, state, path, path) > 0:
                low = 0.0
                high = 0.0
                k = 0
                for i in range(w * w):
                    value = work[i]
                    if value > NEG_INF / 2:
                        if k == 0 or value < low:
                            low = value
                        if k == 0 or value > high:
                            high = value
                        k = 1
                penalty = ((high - low) + 1.0) * w
                for i in range(1, w):
                    if work[i * w] > NEG_INF / 2:
                        work[i * w] -= penalty
                    else:
                        work[i * w] = NEG_INF
                status = _cle(work, w, heads)
                if status != 0:
                    raise MemoryError()
            for i in range(n):
                out[s, i] = heads[i + 1]
    finally:
        free(work)
        free(heads)
        free(state)
        free(path)
    return out_array


cdef Py_ssize_t _find_cycle(
    int64_t* heads, Py_ssize_t n, char* state, int64_t* path, int64_t* cycle
) nogil:
    """Write the nodes of one cycle to `cycle`, in the order the reference's
    find_cycle walks them, and return how many (0: there is none). `state` and `path`
    are scratch arrays of n; `cycle` may be `path`."""
    cdef Py_ssize_t start, node, length, k, first
    for k in range(n):
        state[k] = 0
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
            for k in range(first, length):
                cycle[k - first] = path[k]
            return length - first
        for k in range(length):
            state[path[k]] = 2
    return 0


cdef int _cle(double* s, Py_ssize_t n, int64_t* heads) nogil:
    """Chu-Liu/Edmonds on the n x n row-major matrix s[dep * n + head]: the heads go
    to `heads` (heads[0] = -1). RETURNS 0, or -1 when memory ran out."""
    cdef char* state = <char*>malloc(n * sizeof(char))
    cdef int64_t* path = <int64_t*>malloc(n * sizeof(int64_t))
    cdef int64_t* cyc = <int64_t*>malloc(n * sizeof(int64_t))
    cdef int64_t* rest = <int64_t*>malloc(n * sizeof(int64_t))
    cdef double* cycle_arc = <double*>malloc(n * sizeof(double))
    cdef int64_t* leave_head = <int64_t*>malloc(n * sizeof(int64_t))
    cdef int64_t* enter_dep = <int64_t*>malloc(n * sizeof(int64_t))
    cdef int64_t* sub = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    cdef int status = -1
    if not (state == NULL or path == NULL or cyc == NULL or rest == NULL
            or cycle_arc == NULL or leave_head == NULL or enter_dep == NULL or sub == NULL):
        status = _cle_step(s, n, heads, state, path, cyc, rest, cycle_arc, leave_head, enter_dep, sub)
    free(state)
    free(path)
    free(cyc)
    free(rest)
    free(cycle_arc)
    free(leave_head)
    free(enter_dep)
    free(sub)
    return status


cdef int _cle_step(
    double* s, Py_ssize_t n, int64_t* heads, char* state, int64_t* path, int64_t* cyc,
    int64_t* rest, double* cycle_arc, int64_t* leave_head, int64_t* enter_dep, int64_t* sub,
) nogil:
    """One level of _cle with its scratch arrays (n each): greedy heads, and if they
    hold a cycle, contract it into one node, solve the smaller matrix, expand."""
    cdef Py_ssize_t i, j, k, a, b, m, n_cyc, node
    cdef double best, value, total
    cdef double* contracted
    cdef int status
    heads[0] = -1
    for i in range(1, n):
        best = s[i * n]
        k = 0
        for j in range(1, n):
            if s[i * n + j] > best:
                best = s[i * n + j]
                k = j
        heads[i] = k
    n_cyc = _find_cycle(heads, n, state, path, path)
    if n_cyc == 0:
        return 0
    # cyc and rest in increasing node order, as numpy.flatnonzero gives them.
    for k in range(n):
        state[k] = 0
    for k in range(n_cyc):
        state[path[k]] = 1
    a = 0
    b = 0
    for i in range(n):
        if state[i]:
            cyc[a] = i
            a += 1
        else:
            rest[b] = i
            b += 1
    m = n - n_cyc
    total = 0.0
    for k in range(n_cyc):
        cycle_arc[k] = s[cyc[k] * n + heads[cyc[k]]]
        total += cycle_arc[k]
    contracted = <double*>malloc((m + 1) * (m + 1) * sizeof(double))
    if contracted == NULL:
        return -1
    for a in range(m):
        for b in range(m):
            contracted[a * (m + 1) + b] = s[rest[a] * n + rest[b]]
        # The cycle as head of rest[a]: its best node.
        best = s[rest[a] * n + cyc[0]]
        k = 0
        for j in range(1, n_cyc):
            if s[rest[a] * n + cyc[j]] > best:
                best = s[rest[a] * n + cyc[j]]
                k = j
        leave_head[a] = k
        contracted[a * (m + 1) + m] = best
    for b in range(m):
        # rest[b] as head of the cycle: break it where entering gains most.
        best = s[cyc[0] * n + rest[b]] - cycle_arc[0]
        k = 0
        for j in range(1, n_cyc):
            value = s[cyc[j] * n + rest[b]] - cycle_arc[j]
            if value > best:
                best = value
                k = j
        enter_dep[b] = k
        contracted[m * (m + 1) + b] = best + total
    for b in range(m + 1):
        contracted[b] = NEG_INF
        contracted[b * (m + 1) + b] = NEG_INF
    status = _cle(contracted, m + 1, sub)
    free(contracted)
    if status != 0:
        return status
    for i in range(1, m):
        if sub[i] == m:
            heads[rest[i]] = cyc[leave_head[i]]
        else:
            heads[rest[i]] = rest[sub[i]]
    node = sub[m]
    heads[cyc[enter_dep[node]]] = rest[node]
    return 0
