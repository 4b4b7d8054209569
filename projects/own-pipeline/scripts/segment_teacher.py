"""Save a pipeline with spaCy's rule `sentencizer` in front of its parser:

    python scripts/segment_teacher.py TEACHER OUTPUT

A parser trained on gold sentences (UD treebanks converted one sentence per doc, as
projects/pipeline-ewt's teacher is) never learns where sentences end: on raw text it
makes one tree per text. spaCy's parser respects the sentence starts already set on a
doc (both the starts and the non-starts), so with a sentencizer before it the teacher
parses punctuation-bounded sentences, as it was trained to.
"""
import sys
from pathlib import Path

import spacy


def main(teacher: str, output: Path) -> None:
    nlp = spacy.load(teacher)
    parsers = [name for name in nlp.pipe_names if nlp.get_pipe_meta(name).factory in ("parser", "beam_parser")]
    if not parsers:
        sys.exit(f"{teacher} has no parser (its pipeline: {nlp.pipe_names}): nothing to segment for.")
    if "sentencizer" in nlp.pipe_names:
        sys.exit(f"{teacher} already has a sentencizer: use it as it is.")
    nlp.add_pipe("sentencizer", before=parsers[0])
    nlp.to_disk(output)
    print(f"{teacher} with a sentencizer before '{parsers[0]}' -> {output}: {nlp.pipe_names}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], Path(sys.argv[2]))
