"""Run a bash script of this project with PYTHON set to the interpreter running this file.

Usage: python scripts/sh.py [KEY=VALUE ...] SCRIPT.sh [ARGS ...]

`spacy project run` starts a command's leading `python` with its own interpreter, but
a bash script's `python` is whichever one PATH finds first, which is not the
virtualenv's unless it is activated. The study scripts call "$PYTHON"; project.yml
starts them through this file, so they use the interpreter the user ran spaCy with.
"""
import os
import subprocess
import sys


def main(argv) -> int:
    env = dict(os.environ, PYTHON=sys.executable)
    while argv and "=" in argv[0] and not argv[0].endswith(".sh"):
        key, value = argv.pop(0).split("=", 1)
        env[key] = value
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    return subprocess.call(["bash", *argv], env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
