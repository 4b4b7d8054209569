"""Loading weights into components whose torch modules are shaped at initialize."""
from pathlib import Path
from typing import Dict, Iterable, Union

import srsly


class ShapedFromCfgMixin:
    """thinc loads weights only into a model of the right shape, and our torch modules
    get their shape (label count, encoder width, n-gram rows) at initialize. A
    component that mixes this in implements `_build_from_cfg(cfg)`; loading then reads
    the saved cfg first, builds the module, and hands over to spaCy's loader."""

    def _build_from_cfg(self, cfg: Dict) -> None:
        raise NotImplementedError

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()):
        msg = srsly.msgpack_loads(bytes_data)
        if "cfg" in msg:
            self._build_from_cfg(srsly.json_loads(msg["cfg"]))
        return super().from_bytes(bytes_data, exclude=exclude)  # type: ignore[misc]

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()):
        cfg_path = Path(path) / "cfg"
        if cfg_path.exists():
            self._build_from_cfg(srsly.read_json(cfg_path))
        return super().from_disk(path, exclude=exclude)  # type: ignore[misc]
