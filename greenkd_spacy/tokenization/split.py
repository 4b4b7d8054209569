"""The word tokenizer's rule, in Python: the reference of the compiled split and its
stand-in where greenkd-spacy runs from a source tree that was never built."""
import unicodedata
from typing import List, Tuple


def is_edge_char(char: str) -> bool:
    """Whether a character is split off the start or end of a word: Unicode punctuation
    (P*) and symbols (S*). Letters, digits and combining marks stay in the word."""
    return unicodedata.category(char)[0] in "PS"


def ascii_edge_table() -> bytes:
    """is_edge_char for the 128 ASCII code points, as a lookup table."""
    return bytes(int(is_edge_char(chr(c))) for c in range(128))


def split_words(text: str) -> Tuple[List[str], List[bool]]:
    """The tokens of `text` and whether each is followed by one space.

    Whitespace separates words. Each punctuation or symbol character at the start or the
    end of a word is a token of its own ("(great!)" -> "(", "great", "!", ")"); inside a
    word it stays ("don't", "U.S.", "well-known"). One ' ' after a token is that token's
    trailing space; any other run of whitespace is a token of its own, as in spaCy's
    tokenizer, so that the Doc's text is the text given.
    """
    words: List[str] = []
    spaces: List[bool] = []
    i, n = 0, len(text)
    while i < n:
        start = i
        if text[i].isspace():
            while i < n and text[i].isspace():
                i += 1
            if words and text[start] == " ":
                spaces[-1] = True
                start += 1
            if start < i:
                words.append(text[start:i])
                spaces.append(False)
            continue
        while i < n and not text[i].isspace():
            i += 1
        a, b = start, i
        while a < b and is_edge_char(text[a]):
            a += 1
        while b > a and is_edge_char(text[b - 1]):
            b -= 1
        pieces = list(text[start:a]) + ([text[a:b]] if a < b else []) + list(text[b:i])
        words.extend(pieces)
        spaces.extend([False] * len(pieces))
    return words, spaces
