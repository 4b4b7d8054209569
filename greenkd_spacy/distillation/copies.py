"""A gold weight applied as copies of gold docs, for a shared encoder and its listeners.

spaCy's components learn through `update`, which takes no per-doc weight: a spaCy
silver student (`ner`, `parser`, `trainable_lemmatizer`, `spancat`) weighs a gold doc
against a teacher-annotated one by putting it in the batch more (or less) often. A
component that owns its encoder can do that alone (adapters.SilverAdapter). One that
reads a shared `tok2vec` through a listener cannot: the listener checks that it is handed
the very batch its encoder computed (spaCy's E953). So the loop makes the copies once,
for the encoder and every component listening to it, and those components then count
each copy once (their DistillSettings.gold_copies; contract.DistillableMixin.gold_weight):
with the shipped `configs/baselines/ner.cfg` layout a gold weight of 3 means the same
as with an inline encoder, and the student keeps spaCy's layout (and speed).
"""
from typing import Any, Callable, Dict, Iterable, List, Set

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from ..errors import Errors

GoldCheck = Callable[[Doc], bool]


class CopyCarry:
    """Copies for a weight, one gold doc at a time: the whole part every time and the
    fraction carried to the next (2.5 gives 2, then 3, then 2 copies ...; 0.5 every
    other doc once), so over a run each gold doc counts `weight` times a
    teacher-annotated doc, with no randomness."""

    def __init__(self) -> None:
        self.owed = 0.0

    def take(self, weight: float) -> int:
        self.owed += weight
        copies = int(self.owed + 1e-9)
        self.owed -= copies
        return copies


class GoldCopies:
    """One encoder's group: the components that must see the same batch, and how a gold
    doc is told apart (the `has_gold` of each silver student in the group)."""

    def __init__(self, weight: float, members: Set[str], gold_checks: List[GoldCheck]):
        self.weight = weight
        self.members = members
        self.gold_checks = gold_checks
        # Replayed batches of a resumed run pass through `expand` too, so the carry is
        # the same as in an uninterrupted run.
        self._carry = CopyCarry()

    def expand(self, batch: Iterable[Example]) -> List[Example]:
        """The batch with every gold example `weight` times (whole copies; the fraction
        carried from one gold doc to the next), other examples once, in batch order."""
        expanded: List[Example] = []
        for eg in batch:
            if any(check(eg.reference) for check in self.gold_checks):
                expanded.extend([eg] * self._carry.take(self.weight))
            else:
                expanded.append(eg)
        return expanded


def plan_gold_copies(student: Language, learners: Dict[str, Any], frozen: Set[str]) -> List[GoldCopies]:
    """One GoldCopies per shared encoder that feeds a silver student taking its gold
    weight by copies, when that weight (each learner's run settings) is not 0 or 1 (0:
    no gold doc is learned as gold; 1: one copy, the batch as it is). Tells every
    learner of a group how many copies it sees, so it divides its own gold weight by
    them instead of weighting a copy again.

    Raises ValueError when silver students behind one encoder ask for different gold
    weights: the encoder sees one batch, so there is one number of copies."""
    for pipe in learners.values():
        # A student distilled again in this process still holds the last run's settings.
        pipe.update_distill_settings(gold_copies=0.0)
    groups = []
    for name, proc in student.pipeline:
        listeners = list(getattr(proc, "listening_components", None) or [])
        if not listeners or name in frozen:
            continue
        copying = {n: learners[n] for n in listeners if n in learners and learners[n].takes_gold_by_copies}
        weights = {n: float(pipe.distill_settings.gold_weight) for n, pipe in copying.items()}
        if len(set(weights.values())) > 1:
            raise ValueError(Errors.E080.format(encoder=name, weights=weights))
        weight = next(iter(weights.values()), 0.0)
        if weight in (0.0, 1.0):
            continue
        for listener in listeners:
            if listener in learners:
                learners[listener].update_distill_settings(gold_copies=weight)
        groups.append(GoldCopies(weight, {name, *listeners}, [pipe.has_gold for pipe in copying.values()]))
    return groups
