"""One SHA-256 key from a list of parts, each prefixed by its length.

The teacher cache's fingerprint (distillation/cache.py) and the keys our readers give
their corpora (data/source_key.py) both hash lists of parts. The length prefix keeps
("ab", "c") and ("a", "bc") apart. It lives here, importing nothing of ours, so that a
reader can name its files without importing the distillation package and PyTorch.
"""
import hashlib
import json


class Digest:
    """Incremental length-prefixed SHA-256 over parts."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    @staticmethod
    def encode(part: object) -> bytes:
        """The bytes ``update`` hashes for a part (bytes as they are, anything else as
        sorted JSON): a part hashed into several digests can be encoded once."""
        return part if isinstance(part, bytes) else json.dumps(part, sort_keys=True).encode()

    def update(self, *parts: object) -> "Digest":
        for part in parts:
            data = self.encode(part)
            self._hash.update(len(data).to_bytes(8, "little"))
            self._hash.update(data)
        return self

    def copy(self) -> "Digest":
        """This digest so far, to go on apart: keys that share their first parts hash
        them once."""
        other = type(self).__new__(type(self))
        other._hash = self._hash.copy()
        return other

    def hexdigest(self) -> str:
        return self._hash.hexdigest()
