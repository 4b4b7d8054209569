# cython: language_level=3, boundscheck=False, wraparound=False
"""greenkd.CachedTokenizer.v1's front: spaCy's tokens of each whitespace-separated
chunk, remembered by the hash of the chunk's bytes.

spaCy's rule tokenizer never tokenizes across whitespace, so a text's tokens are its
chunks' tokens one after another. spaCy keeps a cache of chunks too, but on every text
it still makes a Python string of each chunk to hash it and runs its special-case
matcher over the whole Doc; on short texts that is most of a bag-of-n-grams pipeline's
time. Here a chunk seen before costs one hash of its bytes where they lie in the text's
UTF-8, one table lookup and its lexemes pushed onto the Doc; a chunk not seen before is
tokenized by spaCy's tokenizer itself, so the tokens are spaCy's.
"""
from cpython.unicode cimport Py_UNICODE_ISSPACE
from cymem.cymem cimport Pool
from preshed.maps cimport PreshMap
from spacy.strings cimport hash_string, hash_utf8
from spacy.structs cimport LexemeC
from spacy.tokens.doc cimport Doc
from spacy.vocab cimport Vocab

from ._text cimport PyUnicode_AsUTF8AndSize, push_whitespace, skip_chunk, utf8_len


cdef struct Chunk:
    int length
    const LexemeC** lexemes




cdef class ChunkCache:
    """Makes a text's Doc from spaCy's tokens of its chunks, for one spaCy tokenizer.

    Call `clear` whenever the tokenizer's rules change: the remembered chunks were
    tokenized by the old ones.
    """

    cdef Vocab vocab
    cdef object tokenizer
    cdef Pool mem
    cdef PreshMap chunks

    def __init__(self, Vocab vocab, tokenizer):
        self.vocab = vocab
        self.tokenizer = tokenizer
        self.clear()

    def clear(self):
        """Forget every chunk."""
        self.mem = Pool()
        self.chunks = PreshMap()

    def __len__(self):
        return len(self.chunks)

    cdef int _push_chunk(self, Doc doc, str text, const char* utf8, Py_ssize_t a, Py_ssize_t b,
                         Py_ssize_t byte_a, Py_ssize_t byte_b) except -1:
        cdef const Chunk* chunk
        cdef Chunk* new
        cdef Doc tokens
        cdef int i
        cdef str piece = None
        if utf8 is not NULL:
            key = hash_utf8(<char*>utf8 + byte_a, <int>(byte_b - byte_a))
        else:
            piece = text[a:b]
            key = hash_string(piece)
        chunk = <const Chunk*>self.chunks.get(key)
        if chunk is not NULL:
            for i in range(chunk.length):
                doc.push_back(chunk.lexemes[i], False)
            return 0
        if piece is None:
            piece = text[a:b]
        tokens = self.tokenizer(piece)
        for i in range(tokens.length):
            doc.push_back(tokens.c[i].lex, False)
        # Lexemes made inside a memory zone are freed with it: remember nothing there
        # (spaCy's own cache does the same).
        if tokens.length == 0 or self.vocab.in_memory_zone:
            return 0
        new = <Chunk*>self.mem.alloc(1, sizeof(Chunk))
        new.length = tokens.length
        new.lexemes = <const LexemeC**>self.mem.alloc(tokens.length, sizeof(LexemeC*))
        for i in range(tokens.length):
            new.lexemes[i] = tokens.c[i].lex
        self.chunks.set(key, new)
        return 0

    def __call__(self, str text):
        cdef Vocab vocab = self.vocab
        cdef Doc doc = Doc(vocab)
        # i, start: character offsets; bi, bstart: byte offsets into the text's UTF-8
        cdef Py_ssize_t n = len(text), i = 0, start, size
        cdef Py_ssize_t bi = 0, bstart
        cdef const char* utf8 = NULL
        cdef Py_UCS4 c
        if n >= 2 ** 30:
            raise ValueError(
                f"A text of {n:,} characters is too long for spaCy's tokenizer (under 2**30): "
                "split it into smaller texts."
            )
        try:
            # an ASCII str's own characters; otherwise the UTF-8 copy Python keeps with it
            utf8 = PyUnicode_AsUTF8AndSize(text, &size)
        except UnicodeError:  # lone surrogates: chunks are hashed as spaCy hashes strings
            utf8 = NULL
        while i < n:
            c = text[i]
            if Py_UNICODE_ISSPACE(c):
                push_whitespace(doc, text, n, &i, &bi)
                continue
            start = i
            bstart = bi
            skip_chunk(text, n, &i, &bi)
            self._push_chunk(doc, text, utf8, start, i, bstart, bi)
        return doc
