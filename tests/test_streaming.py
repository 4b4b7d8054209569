"""A streamed distillation corpus ([distillation] max_epochs = -1): the teacher's
records are read shard by shard, so neither the corpus nor its targets are held."""
import hashlib

import spacy
import srsly

from greenkd_spacy.distillation.cache import TeacherCache
from greenkd_spacy.distillation.loop import distill

from .test_spacy_adapters import tagger_config, tagger_teacher, tags  # noqa: F401 (fixture)


def _key(i: int) -> str:
    return hashlib.sha1(str(i).encode()).hexdigest()


def _cache(tmp_path, n_shards=3, per_shard=4) -> TeacherCache:
    cache = TeacherCache(tmp_path, "f" * 40)
    cache.directory.mkdir(parents=True)
    for index in range(n_shards):
        records = {_key(index * per_shard + j): {"v": index * per_shard + j} for j in range(per_shard)}
        data = srsly.msgpack_dumps(records)
        cache.shard_path(index).write_bytes(data)
        cache.add_shard(index, {"rows": per_shard, "sha256": hashlib.sha256(data).hexdigest()})
    cache.mark_complete(n_shards)
    return cache


def test_lazy_records_answer_like_the_loaded_ones_holding_few_shards(tmp_path):
    cache = _cache(tmp_path)
    eager = cache.records()
    lazy = cache.lazy_records(max_shards=1)
    assert len(lazy) == len(eager) == 12
    for i in range(12):  # in the teacher pass's order, as a streamed corpus reads them
        assert lazy[_key(i)] == eager[_key(i)] == {"v": i}
        assert len(lazy._loaded) == 1
    assert lazy.get(_key(99)) is None and _key(99) not in lazy
    assert sorted(lazy) == sorted(eager)


def test_streamed_distillation_teaches_like_the_shuffled_one(tagger_teacher, tmp_path):  # noqa: F811
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    config = tagger_config(tmp_path)
    config["distillation"]["max_epochs"] = -1
    config["distillation"]["shard_size"] = 1  # two shards: the lazy index must find both
    teacher = spacy.load(tagger_teacher / "model")
    student, summary = distill(teacher, config, tmp_path / "out")
    assert tags(student) == tags(teacher)
    assert summary["training"]["steps"] == 60
