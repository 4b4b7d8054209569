# cython: language_level=3, boundscheck=False, wraparound=False
"""The word tokenizer's split, compiled: one pass over the text's characters, each
token's lexeme looked up and pushed onto the Doc as it is found.

For an ASCII text (most English text) a token's lexeme is found by hashing its bytes
where they lie in the text, as spaCy's StringStore hashes a string: no Python string is
made for a token whose lexeme the vocab already has. A token the vocab has not seen, a
token that is one of spaCy's symbol names (hashed differently) and any token of a text
with other characters take `Vocab.get`, which makes the lexeme.

`split.split_words` is the reference it is tested against (the same tokens and
spaces for any text).
"""
from cpython.unicode cimport Py_UNICODE_ISSPACE
from spacy.strings cimport hash_utf8
from spacy.structs cimport LexemeC
from spacy.tokens.doc cimport Doc
from spacy.vocab cimport Vocab

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL

from .split import is_edge_char


cdef class WordSplitter:
    """Makes the Doc of a text by the rule of `split.split_words`, for one vocab."""

    cdef Vocab vocab
    cdef unsigned char ascii_edge[128]
    cdef dict other_edge  # non-ASCII characters met so far: whether each is an edge

    def __init__(self, Vocab vocab, bytes ascii_edge):
        if len(ascii_edge) != 128:
            raise ValueError("ascii_edge: one byte per ASCII code point")
        self.vocab = vocab
        for k in range(128):
            self.ascii_edge[k] = ascii_edge[k]
        self.other_edge = {}

    cdef inline bint _edge(self, Py_UCS4 c):
        if c < 128:
            return self.ascii_edge[c]
        found = self.other_edge.get(c)
        if found is None:
            found = is_edge_char(chr(c))
            self.other_edge[c] = found
        return found

    cdef inline int _push(self, Doc doc, str text, const char* ascii, Py_ssize_t a, Py_ssize_t b) except -1:
        """Push text[a:b]'s lexeme. `ascii`: the text's bytes when it is all ASCII
        (character offsets are byte offsets), else NULL."""
        cdef const LexemeC* lex
        if ascii is not NULL:
            lex = <const LexemeC*>self.vocab._by_orth.get(hash_utf8(<char*>ascii + a, <int>(b - a)))
            if lex is not NULL:
                doc.push_back(lex, False)
                return 0
        doc.push_back(self.vocab.get(doc.mem, text[a:b]), False)
        return 0

    def __call__(self, str text):
        cdef Vocab vocab = self.vocab
        cdef Doc doc = Doc(vocab)
        cdef Py_ssize_t n = len(text), i = 0, start, end, a, b, k, size
        cdef const char* ascii = NULL
        if PyUnicode_IS_ASCII(text):
            ascii = PyUnicode_AsUTF8AndSize(text, &size)
        cdef Py_UCS4 c
        while i < n:
            start = i
            c = text[i]
            if Py_UNICODE_ISSPACE(c):
                i += 1
                while i < n:
                    c = text[i]
                    if not Py_UNICODE_ISSPACE(c):
                        break
                    i += 1
                # One ' ' after a token is that token's trailing space; the rest of the
                # run (or a run at the start of the text) is a whitespace token, as in
                # spaCy's tokenizer.
                c = text[start]
                if doc.length > 0 and c == u' ':
                    doc.c[doc.length - 1].spacy = True
                    start += 1
                if start < i:
                    doc.push_back(vocab.get(doc.mem, text[start:i]), False)
                continue
            i += 1
            while i < n:
                c = text[i]
                if Py_UNICODE_ISSPACE(c):
                    break
                i += 1
            end = i
            a = start
            while a < end and self._edge(text[a]):
                self._push(doc, text, ascii, a, a + 1)
                a += 1
            b = end
            while b > a and self._edge(text[b - 1]):
                b -= 1
            if a < b:
                self._push(doc, text, ascii, a, b)
            for k in range(b, end):
                self._push(doc, text, ascii, k, k + 1)
        return doc
