"""A student that tokenizes as its teacher.

A student replaces its teacher, so a text has to become the same tokens in both: the
teacher's tags, trees and entities are targets per token, and a user who swaps the
pipelines expects their special cases (and any rule they changed) to hold. A config
builds the student's tokenizer from the language's defaults; `spacy distill` loads the
teacher's rules, exceptions and special cases into it before anything is tokenized
(`[distillation] teacher_tokenizer`), as long as both are spaCy's rule tokenizer (plain
or behind greenkd.CachedTokenizer.v1). A custom tokenizer (Japanese, Chinese, a user's
own) has no rules to hand over: each pipeline keeps its own, and a warning says so when
the two are not the same kind.
"""
import warnings
from typing import Any, Optional

from spacy.language import Language
from spacy.tokenizer import Tokenizer

from .cached import CachedTokenizer


def unwrap(tokenizer: Any) -> Any:
    """The tokenizer that decides the tokens: the spaCy tokenizer inside a
    CachedTokenizer, or the tokenizer itself."""
    return tokenizer.tokenizer if isinstance(tokenizer, CachedTokenizer) else tokenizer


def rule_tokenizer(tokenizer: Any) -> Optional[Tokenizer]:
    """spaCy's rule tokenizer behind `tokenizer`; None for any other kind."""
    inner = unwrap(tokenizer)
    return inner if isinstance(inner, Tokenizer) else None


def adopt_teacher_tokenizer(student: Language, teacher: Language) -> bool:
    """Load the teacher's tokenizer rules into the student's tokenizer (its cache, if it
    has one, emptied). RETURNS (bool): whether they were loaded."""
    student_rules, teacher_rules = rule_tokenizer(student.tokenizer), rule_tokenizer(teacher.tokenizer)
    if student_rules is None or teacher_rules is None or student.lang != teacher.lang:
        if type(unwrap(student.tokenizer)) is not type(unwrap(teacher.tokenizer)) or student.lang != teacher.lang:
            warnings.warn(
                f"(greenkd-spacy) The student's tokenizer ({type(unwrap(student.tokenizer)).__name__}, "
                f"lang '{student.lang}') is not the teacher's kind ({type(unwrap(teacher.tokenizer)).__name__}, "
                f"lang '{teacher.lang}'), so the teacher's rules cannot be handed over and the two may split "
                "a text differently. Give the student the teacher's tokenizer in [nlp.tokenizer] (and its "
                "lang in [nlp]), or set [distillation] teacher_tokenizer = false to silence this."
            )
        return False
    data = teacher_rules.to_bytes(exclude=["vocab"])
    # Through the student's own object, so that a CachedTokenizer empties its cache.
    student.tokenizer.from_bytes(data, exclude=["vocab"])
    return True
