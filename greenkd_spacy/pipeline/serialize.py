"""Loading weights into components whose torch modules are shaped at initialize."""
from pathlib import Path
from typing import Dict, Iterable, Union

import srsly

from ..models.storage import upcast_params


class ShapedFromCfgMixin:
    """thinc loads weights only into a model of the right shape, and our torch modules
    get their shape (label count, encoder width, n-gram rows) at initialize. A
    component that mixes this in implements `_build_from_cfg(cfg)`; loading then reads
    the saved cfg first, builds the module, and hands over to spaCy's loader; weights
    stored as float16 (`spacy greenkd-compact`) are then cast back to float32."""

    upcasts_stored_weights = True  # read by models/storage.py

    def _build_from_cfg(self, cfg: Dict) -> None:
        raise NotImplementedError

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()):
        msg = srsly.msgpack_loads(bytes_data)
        if "cfg" in msg:
            self._build_from_cfg(srsly.json_loads(msg["cfg"]))
        loaded = super().from_bytes(bytes_data, exclude=exclude)  # type: ignore[misc]
        upcast_params(self.model)  # type: ignore[attr-defined]
        return loaded

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()):
        cfg_path = Path(path) / "cfg"
        if cfg_path.exists():
            self._build_from_cfg(srsly.read_json(cfg_path))
        loaded = super().from_disk(path, exclude=exclude)  # type: ignore[misc]
        upcast_params(self.model)  # type: ignore[attr-defined]
        return loaded
