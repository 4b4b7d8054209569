"""Each student's entity agreement with the teacher per entity type, on held-out text:
where the entity F of a student comes from.

Usage: python scripts/ents_per_type.py TEACHER TEXT.txt OUTPUT.json NAME=STUDENT [NAME=STUDENT ...]
The teacher annotates TEXT (one text per line) as the reference; each student is scored
against it with spaCy's scorer. OUTPUT lists, per type, the teacher's count and each
student's precision, recall and F in percent.
"""
import sys
from typing import Dict, List

import spacy
import srsly
from spacy.scorer import Scorer
from spacy.training import Example

from greenkd_spacy.data.text_corpus import iter_texts


def main(teacher_path: str, text_path: str, output: str, students: List[str]) -> None:
    texts = list(iter_texts(text_path))
    reference = list(spacy.load(teacher_path).pipe(texts, batch_size=256))
    counts: Dict[str, int] = {}
    for doc in reference:
        for ent in doc.ents:
            counts[ent.label_] = counts.get(ent.label_, 0) + 1
    result = {"teacher": teacher_path, "data": text_path, "texts": len(texts), "teacher_counts": counts, "students": {}}
    for spec in students:
        name, _, path = spec.partition("=")
        predicted = list(spacy.load(path).pipe(texts, batch_size=256))
        scores = Scorer.score_spans([Example(p, r) for p, r in zip(predicted, reference)], "ents")
        per_type = {
            label: {k: round(v * 100, 2) for k, v in prf.items()}
            for label, prf in sorted(scores["ents_per_type"].items(), key=lambda item: -counts.get(item[0], 0))
        }
        result["students"][name] = {"model": path, "ents_f": round(scores["ents_f"] * 100, 2), "per_type": per_type}
        print(f"{name}: entity F {scores['ents_f'] * 100:.2f}")
        for label, prf in per_type.items():
            print(f"  {label:12s} {counts.get(label, 0):5d}  P {prf['p']:6.2f}  R {prf['r']:6.2f}  F {prf['f']:6.2f}")
    srsly.write_json(output, result)


if __name__ == "__main__":
    if len(sys.argv) < 5 or any("=" not in s for s in sys.argv[4:]):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
