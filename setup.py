"""Builds greenkd-spacy's compiled modules; everything else is in pyproject.toml.

The DAN's n-gram featurization reads spaCy's token arrays directly (Cython, against the
spaCy headers of the version we run with), so the build needs spaCy, Cython and NumPy's
headers (spaCy's doc.pxd cimports numpy); pyproject.toml's build-system lists them.
The parser's maximum spanning tree and the labeller's Viterbi are plain loops over score
arrays.
"""
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension(
        "greenkd_spacy.models._ngram_rows",
        ["greenkd_spacy/models/_ngram_rows.pyx"],
        include_dirs=[numpy.get_include()],
        language="c++",  # spaCy's vocab.pxd cimports libcpp
    ),
    # greenkd.WordTokenizer.v1's split, pushing lexemes onto the Doc (tokenization/split.py
    # is the reference).
    Extension(
        "greenkd_spacy.tokenization._split",
        ["greenkd_spacy/tokenization/_split.pyx"],
        depends=["greenkd_spacy/tokenization/_text.pxd"],
        include_dirs=[numpy.get_include()],
        language="c++",
    ),
    # greenkd.CachedTokenizer.v1's chunk cache in front of spaCy's tokenizer.
    Extension(
        "greenkd_spacy.tokenization._chunks",
        ["greenkd_spacy/tokenization/_chunks.pyx"],
        depends=["greenkd_spacy/tokenization/_text.pxd"],
        include_dirs=[numpy.get_include()],
        language="c++",
    ),
    # Chu-Liu/Edmonds for greenkd_parser (plain C loops; decoding/mst.py is the reference).
    Extension("greenkd_spacy.decoding._mst", ["greenkd_spacy/decoding/_mst.pyx"], include_dirs=[numpy.get_include()]),
    # Viterbi over the allowed transitions for the CRF labeller (the torch method is the reference).
    Extension("greenkd_spacy.decoding._viterbi", ["greenkd_spacy/decoding/_viterbi.pyx"], include_dirs=[numpy.get_include()]),
]

setup(ext_modules=cythonize(extensions, compiler_directives={"language_level": "3"}))
