# cython: language_level=3, boundscheck=False, wraparound=False
"""The word tokenizer's split, compiled: one pass over the text's characters, each
token's lexeme looked up and pushed onto the Doc as it is found.

A token's lexeme is found by hashing its bytes where they lie in the text's UTF-8, as
spaCy's StringStore hashes a string: no Python string is made for a token whose lexeme
the vocab already has. A token the vocab has not seen and a token that is one of
spaCy's symbol names (hashed differently) take `Vocab.get`, which makes the lexeme.

`split.split_words` is the reference it is tested against (the same tokens and
spaces for any text).
"""
from cpython.unicode cimport Py_UNICODE_ISSPACE
from spacy.strings cimport hash_utf8
from spacy.structs cimport LexemeC
from spacy.tokens.doc cimport Doc
from spacy.vocab cimport Vocab

from ._text cimport PyUnicode_AsUTF8AndSize, push_whitespace, skip_chunk, utf8_len
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

    cdef inline int _push(self, Doc doc, str text, const char* utf8, Py_ssize_t a, Py_ssize_t b,
                          Py_ssize_t byte_a, Py_ssize_t byte_b) except -1:
        """Push text[a:b]'s lexeme; `utf8` is the text's UTF-8 (NULL if it has none),
        where the token is bytes byte_a to byte_b."""
        cdef const LexemeC* lex
        if utf8 is not NULL:
            lex = <const LexemeC*>self.vocab._by_orth.get(hash_utf8(<char*>utf8 + byte_a, <int>(byte_b - byte_a)))
            if lex is not NULL:
                doc.push_back(lex, False)
                return 0
        doc.push_back(self.vocab.get(doc.mem, text[a:b]), False)
        return 0

    def __call__(self, str text):
        cdef Vocab vocab = self.vocab
        cdef Doc doc = Doc(vocab)
        # i, start, end, a, b, k: character offsets; their b-prefixed twins: byte
        # offsets into the text's UTF-8
        cdef Py_ssize_t n = len(text), i = 0, start, end, a, b, k, size
        cdef Py_ssize_t bi = 0, bstart, bend, ba, bb, bk
        cdef const char* utf8 = NULL
        cdef Py_UCS4 c
        try:
            # an ASCII str's own characters; otherwise the UTF-8 copy Python keeps with it
            utf8 = PyUnicode_AsUTF8AndSize(text, &size)
        except UnicodeError:  # lone surrogates: no UTF-8, every token takes Vocab.get
            utf8 = NULL
        while i < n:
            c = text[i]
            if Py_UNICODE_ISSPACE(c):
                push_whitespace(doc, text, n, &i, &bi)
                continue
            start = i
            bstart = bi
            skip_chunk(text, n, &i, &bi)
            end = i
            bend = bi
            a = start
            ba = bstart
            while a < end:
                c = text[a]
                if not self._edge(c):
                    break
                self._push(doc, text, utf8, a, a + 1, ba, ba + utf8_len(c))
                a += 1
                ba += utf8_len(c)
            b = end
            bb = bend
            while b > a:
                c = text[b - 1]
                if not self._edge(c):
                    break
                b -= 1
                bb -= utf8_len(c)
            if a < b:
                self._push(doc, text, utf8, a, b, ba, bb)
            bk = bb
            for k in range(b, end):
                c = text[k]
                self._push(doc, text, utf8, k, k + 1, bk, bk + utf8_len(c))
                bk += utf8_len(c)
        return doc
