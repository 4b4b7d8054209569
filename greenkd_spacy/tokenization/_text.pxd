# cython: language_level=3
"""What both compiled tokenizers do alike: walk a text's characters with their UTF-8
byte offsets beside them, and treat whitespace as spaCy's tokenizer does."""
from cpython.unicode cimport Py_UNICODE_ISSPACE
from spacy.tokens.doc cimport Doc
from spacy.vocab cimport Vocab


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL


cdef inline Py_ssize_t utf8_len(Py_UCS4 c) nogil:
    """The number of bytes of a code point in UTF-8."""
    if c < 0x80:
        return 1
    if c < 0x800:
        return 2
    if c < 0x10000:
        return 3
    return 4


cdef inline int push_whitespace(Doc doc, str text, Py_ssize_t n, Py_ssize_t* i, Py_ssize_t* bi) except -1:
    """Step i (characters) and bi (bytes) over the run of whitespace at text[i]. As in
    spaCy's tokenizer, one ' ' right after a token is that token's trailing space and
    the rest of the run (or a run at the start of the text) is a token of its own."""
    cdef Py_ssize_t start = i[0]
    cdef Py_UCS4 c
    while i[0] < n:
        c = text[i[0]]
        if not Py_UNICODE_ISSPACE(c):
            break
        i[0] += 1
        bi[0] += utf8_len(c)
    if doc.length > 0 and text[start] == u' ':
        doc.c[doc.length - 1].spacy = True
        start += 1
    if start < i[0]:
        doc.push_back(doc.vocab.get(doc.mem, text[start:i[0]]), False)
    return 0


cdef inline void skip_chunk(str text, Py_ssize_t n, Py_ssize_t* i, Py_ssize_t* bi):
    """Step i (characters) and bi (bytes) over the run of non-whitespace at text[i]."""
    cdef Py_UCS4 c
    while i[0] < n:
        c = text[i[0]]
        if Py_UNICODE_ISSPACE(c):
            break
        i[0] += 1
        bi[0] += utf8_len(c)
