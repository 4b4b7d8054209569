"""Teacher outputs computed once and kept on disk.

Several students and epochs read the same teacher distributions, so the teacher runs
once per (teacher, corpus) pair. The cache directory is named by a fingerprint of the
teacher's weights, the corpus content and the settings that shape the targets; a
changed teacher or corpus gets a new directory and never reads stale targets.

Layout: ``CACHE_ROOT/<fingerprint>/shard-00000.msgpack`` ... plus ``manifest.json`` with,
per finished shard, its example range, rows, teacher fingerprint and SHA-256 (shards
written by worker.py, locally or on Ray; the manifest by annotate.py). Each shard and the manifest are written to a
temporary file and renamed into place, so a killed run leaves either a whole shard or
none; a shard whose checksum does not match is rebuilt, not trusted.

What a record holds is the business of the target codecs (targets.py); the cache only
stores msgpack shards of records keyed by targets.doc_key.
"""
import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import numpy
import srsly
import torch
from spacy.pipeline import Sentencizer
from thinc.api import Model

from ..atomic import atomic_write_bytes
from ..digest import Digest

class Fingerprint(Digest):
    """Incremental SHA-256 over everything that determines the teacher targets."""

    def update_pipe(self, name: str, proc: object) -> "Fingerprint":
        """Add a pipeline component by what decides its outputs: its weights.

        Not ``proc.to_bytes()``: spacy-transformers writes the Hugging Face config into
        those bytes with ``_name_or_path`` set to the temporary directory the model was
        loaded through, so the same teacher hashed in two processes gave two keys and
        its cache was never found again. Here every thinc node adds its name, dims and
        parameters, every PyTorch shim its state dict, and the component its JSON-able
        settings (``cfg``); components without a thinc model fall back to their bytes,
        except where those bytes are not the same in two processes (a sentencizer's).
        """
        model = getattr(proc, "model", None)
        if not isinstance(model, Model):
            if isinstance(proc, Sentencizer):
                # Its bytes list a set of characters, whose order changes with every
                # process's string hashing: the same teacher got a new key each run.
                self.update(name, "sentencizer", sorted(proc.punct_chars), bool(proc.overwrite))
            elif hasattr(proc, "to_bytes"):
                self.update(name, proc.to_bytes(exclude=["vocab"]))
            return self
        cfg = getattr(proc, "cfg", None) or {}
        self.update(name, {key: value for key, value in sorted(cfg.items()) if _is_json(value)})
        for node in model.walk():
            dims = {dim: node.maybe_get_dim(dim) for dim in node.dim_names}
            self.update(node.name, dims)
            for param in node.param_names:
                if node.has_param(param):
                    array = node.ops.to_numpy(node.get_param(param))
                    self.update(param, str(array.dtype), list(array.shape), numpy.ascontiguousarray(array).tobytes())
            for shim in node.shims:
                module = getattr(shim, "_model", None)
                state_dict = getattr(module, "state_dict", None)
                if state_dict is None:
                    self.update(shim.to_bytes())
                    continue
                for key, tensor in state_dict().items():
                    flat = tensor.detach().cpu().contiguous().reshape(-1)
                    self.update(key, str(tensor.dtype), list(tensor.shape), flat.view(torch.uint8).numpy().tobytes())
        return self


def _is_json(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


class TeacherCache:
    """A sharded, checksummed store of per-doc teacher records."""

    def __init__(self, root: Path, fingerprint: str):
        self.fingerprint = fingerprint
        self.directory = Path(root) / fingerprint[:20]
        self.manifest_path = self.directory / "manifest.json"
        self.manifest = self._read_manifest()

    def _read_manifest(self) -> Dict:
        if self.manifest_path.exists():
            try:
                manifest = srsly.read_json(self.manifest_path)
                if manifest.get("fingerprint") == self.fingerprint:
                    return manifest
            except ValueError:
                pass
        return {"fingerprint": self.fingerprint, "shards": {}, "complete": False, "n_shards": None}

    def _write_manifest(self) -> None:
        atomic_write_bytes(self.manifest_path, srsly.json_dumps(self.manifest, indent=2).encode())

    @property
    def complete(self) -> bool:
        return bool(self.manifest.get("complete")) and all(
            self.has_shard(int(i)) for i in self.manifest["shards"]
        )

    @staticmethod
    def shard_file(directory: Path, index: int) -> Path:
        return Path(directory) / f"shard-{index:05d}.msgpack"

    def shard_path(self, index: int) -> Path:
        return self.shard_file(self.directory, index)

    def has_shard(self, index: int) -> bool:
        """A shard counts as done only if its bytes match the manifest's checksum."""
        entry = self.manifest["shards"].get(str(index))
        path = self.shard_path(index)
        if entry is None or not path.exists():
            return False
        return hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"]

    def add_shard(self, index: int, entry: Dict) -> None:
        """Vouch for a shard a worker has written: its entry (rows, sha256, example
        range, ...) goes into the manifest, which only the driver writes."""
        self.manifest["shards"][str(index)] = dict(entry, fingerprint=self.fingerprint)
        self._write_manifest()

    def mark_complete(self, n_shards: int, info: Optional[Dict] = None) -> None:
        self.manifest["complete"] = True
        self.manifest["n_shards"] = n_shards
        if info:
            self.manifest["info"] = info
        self._write_manifest()

    def prefix_summary(self, n_examples: int) -> Dict:
        """The pass's summary for a run that reads only the corpus's first
        `n_examples`: charged the pass's cost in proportion to the words it reads (shard
        by shard; the shard it ends in pro rata), so a transfer-size curve's points
        keep honest teacher costs though only the largest paid for the pass."""
        info = self.manifest.get("info", {})
        words = total = 0.0
        for entry in self.manifest["shards"].values():
            first, examples, shard_words = entry.get("first_example", 0), entry.get("examples", 0), entry.get("words", 0)
            total += shard_words
            if examples and first < n_examples:
                words += shard_words * min(1.0, (n_examples - first) / examples)
        share = words / total if total else 0.0
        summary = {key: value for key, value in info.items() if key not in ("this_run", "earlier_runs")}
        summary.update(reused=True, docs=n_examples, docs_already_cached=n_examples, words_labelled=int(round(words)))
        for key in ("wall_seconds", "cpu_seconds"):
            if key in info:
                summary[key] = info[key] * share
        summary["prefix_of"] = {"cache": str(self.directory), "docs": info.get("docs"), "words": int(total), "share": round(share, 6)}
        return summary

    def read_shard(self, index: int) -> Dict[str, Dict]:
        return srsly.msgpack_loads(self.shard_path(index).read_bytes())

    def shard_indices(self) -> List[int]:
        return sorted(int(i) for i in self.manifest["shards"])

    def records(self) -> Dict[str, Dict]:
        """Every record in memory: for a corpus the loop shuffles (it holds the corpus
        in memory too), whose batches reach into any shard."""
        merged: Dict[str, Dict] = {}
        for index in self.shard_indices():
            merged.update(self.read_shard(index))
        return merged

    def lazy_records(self, max_shards: int = 2) -> "ShardRecords":
        """The records read shard by shard as they are asked for: for a streamed corpus
        ([distillation] max_epochs = -1), whose batches follow the teacher pass's order,
        so memory stays flat however long the corpus is."""
        return ShardRecords(self, max_shards)


class ShardRecords(Mapping):
    """doc key -> record over a cache's shards, holding at most `max_shards` decoded.

    The key index is compact (the first 64 bits of each key, sorted, and its shard: 12
    bytes a doc, 12 MB for a million docs) and is built by one pass over the shards.
    """

    def __init__(self, cache: TeacherCache, max_shards: int = 2):
        self.cache = cache
        self.max_shards = max(1, max_shards)
        self._loaded: "OrderedDict[int, Dict[str, Dict]]" = OrderedDict()
        prefixes, owners = [], []
        for index in cache.shard_indices():
            keys = list(cache.read_shard(index))
            prefixes.append(numpy.array([_prefix(key) for key in keys], dtype="uint64"))
            owners.append(numpy.full(len(keys), index, dtype="int32"))
        prefix = numpy.concatenate(prefixes) if prefixes else numpy.zeros(0, dtype="uint64")
        owner = numpy.concatenate(owners) if owners else numpy.zeros(0, dtype="int32")
        order = numpy.argsort(prefix, kind="stable")
        self._prefix, self._owner = prefix[order], owner[order]

    def _shard_of(self, key: str) -> Optional[int]:
        value = numpy.uint64(_prefix(key))
        i = int(numpy.searchsorted(self._prefix, value))
        if i < len(self._prefix) and self._prefix[i] == value:
            return int(self._owner[i])
        return None

    def _shard(self, index: int) -> Dict[str, Dict]:
        if index in self._loaded:
            self._loaded.move_to_end(index)
        else:
            self._loaded[index] = self.cache.read_shard(index)
            while len(self._loaded) > self.max_shards:
                self._loaded.popitem(last=False)
        return self._loaded[index]

    def __getitem__(self, key: str) -> Dict:
        index = self._shard_of(key)
        if index is None:
            raise KeyError(key)
        return self._shard(index)[key]

    def __iter__(self) -> Iterator[str]:
        for index in self.cache.shard_indices():
            yield from self.cache.read_shard(index)

    def __len__(self) -> int:
        return len(self._prefix)


def _prefix(key: str) -> int:
    """The first 64 bits of a hex doc key (targets.doc_key is a SHA-1 hex digest)."""
    return int(key[:16], 16)


def shards(items: Iterable, size: int) -> Iterator[Tuple[int, List]]:
    batch: List = []
    index = 0
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield index, batch
            index += 1
            batch = []
    if batch:
        yield index, batch
