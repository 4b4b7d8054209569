"""Gold weight as copies of gold docs (distillation/copies.py): how many copies each
gold doc gets, and which components of a student share the copied batch."""
import pytest
import spacy
from spacy.training import Example

from greenkd_spacy.distillation.adapters import distillable
from greenkd_spacy.distillation.contract import DistillSettings
from greenkd_spacy.distillation.copies import CopyCarry, GoldCopies, plan_gold_copies


def _examples(nlp, gold_flags):
    examples = []
    for i, gold in enumerate(gold_flags):
        doc = nlp.make_doc(f"Doc {i} here")
        ref = doc.copy()
        if gold:
            ref.ents = []  # annotated: every token O
        examples.append(Example(doc, ref))
    return examples


def test_copy_carry_counts_each_gold_doc_weight_times_over_a_run():
    carry = CopyCarry()
    assert [carry.take(2.5) for _ in range(4)] == [2, 3, 2, 3]
    carry = CopyCarry()
    assert [carry.take(0.5) for _ in range(4)] == [0, 1, 0, 1]
    carry = CopyCarry()
    assert sum(carry.take(0.1) for _ in range(100)) == 10  # no float drift lost a copy


def test_gold_copies_expand_only_gold_examples_in_order():
    nlp = spacy.blank("en")
    batch = _examples(nlp, [True, False, True])
    group = GoldCopies(2.0, {"tok2vec", "ner"}, [lambda doc: doc.has_annotation("ENT_IOB")])
    expanded = group.expand(batch)
    assert [batch.index(eg) for eg in expanded] == [0, 0, 1, 2, 2]
    quarter = GoldCopies(0.25, {"tok2vec", "ner"}, [lambda doc: doc.has_annotation("ENT_IOB")])
    gold_only = _examples(nlp, [True, True])
    assert quarter.expand(gold_only) == []  # 0.25 + 0.25: no whole copy yet
    assert len(quarter.expand(gold_only)) == 1


def _student():
    """spaCy's efficiency ner + tagger: both listen to one shared tok2vec."""
    from spacy.cli.init_config import init_config

    config = init_config(lang="en", pipeline=["ner", "tagger"], optimize="efficiency")
    return spacy.util.load_model_from_config(config, auto_fill=True)


def _with_weights(learners, **weights):
    """The loop hands each learner its gold weight before planning the copies."""
    for name, pipe in learners.items():
        pipe.set_distill_settings(DistillSettings(gold_weight=weights.get(name, 1.0)))
    return learners


def test_plan_groups_the_encoder_with_every_listener_of_a_silver_student():
    nlp = _student()
    learners = {name: distillable(nlp.get_pipe(name)) for name in ("ner", "tagger")}
    groups = plan_gold_copies(nlp, _with_weights(learners, ner=3.0, tagger=3.0), frozen=set())
    assert len(groups) == 1 and groups[0].members == {"tok2vec", "ner", "tagger"}
    assert groups[0].weight == 3.0
    # Both listeners count a copy once; the weight is in the copies.
    assert learners["ner"].gold_weight == 1.0 and learners["tagger"].gold_weight == 1.0
    for weight in (0.0, 1.0):
        assert plan_gold_copies(nlp, _with_weights(learners, ner=weight, tagger=3.0), frozen=set()) == []
        assert learners["ner"].distill_settings.gold_copies == 0.0  # an old count cleared
        assert learners["tagger"].gold_weight == 3.0  # no copies: its own weight in its loss
    assert plan_gold_copies(nlp, _with_weights(learners, ner=3.0), frozen={"tok2vec"}) == []


def test_a_listener_with_its_own_gold_weight_divides_it_by_the_copies():
    """[distillation.gold_weights]: a soft-target tagger asking for 6 beside a silver ner
    copying gold docs 3 times weighs each copy 2, so a gold doc counts 6 in its loss."""
    nlp = _student()
    learners = _with_weights({name: distillable(nlp.get_pipe(name)) for name in ("ner", "tagger")}, ner=3.0, tagger=6.0)
    groups = plan_gold_copies(nlp, learners, frozen=set())
    assert [group.weight for group in groups] == [3.0]
    assert learners["ner"].gold_weight == 1.0 and learners["tagger"].gold_weight == 2.0


def test_silver_students_behind_one_encoder_must_share_a_gold_weight():
    from spacy.cli.init_config import init_config

    config = init_config(lang="en", pipeline=["ner", "parser"], optimize="efficiency")
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    learners = _with_weights({name: distillable(nlp.get_pipe(name)) for name in ("ner", "parser")}, ner=3.0, parser=2.0)
    with pytest.raises(ValueError, match=r"encoder 'tok2vec'.*'ner': 3\.0.*'parser': 2\.0"):
        plan_gold_copies(nlp, learners, frozen=set())


def test_plan_leaves_a_group_without_a_silver_student_alone():
    nlp = _student()
    learners = _with_weights({"tagger": distillable(nlp.get_pipe("tagger"))}, tagger=3.0)  # the ner is not distilled
    assert plan_gold_copies(nlp, learners, frozen=set()) == []
    assert learners["tagger"].gold_weight == 3.0
