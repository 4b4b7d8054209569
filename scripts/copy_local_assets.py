"""Copy dataset folders from a local mirror into assets/, for machines without internet.

Usage: python scripts/copy_local_assets.py MIRROR_DIR ASSETS_DIR SUBDIR [SUBDIR ...]
Online users can run `python -m spacy project assets` instead, which downloads the
same files from their official URLs and checks them against project.yml's checksums.
"""
import shutil
import sys
from pathlib import Path


def main(mirror: str, assets: str, *subdirs: str) -> None:
    for subdir in subdirs:
        source = Path(mirror) / subdir
        target = Path(assets) / subdir
        if not source.is_dir():
            if target.is_dir() and any(target.iterdir()):
                print(f"{target} already present; mirror {source} not found, keeping it")
                continue
            sys.exit(
                f"Local mirror {source} not found and {target} is empty. Either run "
                "`python -m spacy project assets` (needs internet) or set "
                "--vars.local_data to a directory with the datasets."
            )
        target.mkdir(parents=True, exist_ok=True)
        for path in sorted(source.iterdir()):
            if path.is_file():
                shutil.copy2(path, target / path.name)
        print(f"Copied {source} -> {target}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
