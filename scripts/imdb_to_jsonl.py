"""Convert the official IMDB archive (aclImdb_v1.tar.gz) to the JSONL layout of our local
data mirror: assets/imdb/{train,test,unsup}.jsonl.gz, one review a line as
{"id": "train/neg/0_3", "label": "neg" | "pos" | null, "rating": 3, "text": ...}, files
ordered by split, label, then the review number. The text is kept as is (with `<br />`).

    python scripts/imdb_to_jsonl.py assets/imdb/aclImdb_v1.tar.gz assets/imdb
"""
import gzip
import json
import re
import sys
import tarfile
from collections import defaultdict
from pathlib import Path

_MEMBER = re.compile(r"^aclImdb/(train|test)/(neg|pos|unsup)/(\d+)_(\d+)\.txt$")


def convert(archive: Path, out_dir: Path) -> None:
    reviews = defaultdict(list)  # output name -> [(label, number, record)]
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            match = _MEMBER.match(member.name)
            if not match or not member.isfile():
                continue
            split, label, number, rating = match.groups()
            text = tar.extractfile(member).read().decode("utf8")
            record = {
                "id": f"{split}/{label}/{number}_{rating}",
                "label": None if label == "unsup" else label,
                "rating": int(rating),
                "text": text,
            }
            reviews["unsup" if label == "unsup" else split].append((label, int(number), record))
    if not reviews:
        sys.exit(f"{archive} has no aclImdb/<split>/<label>/<n>_<rating>.txt members: is it aclImdb_v1.tar.gz?")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, rows in sorted(reviews.items()):
        rows.sort(key=lambda row: row[:2])
        path = out_dir / f"{name}.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf8") as file_:
            file_.writelines(json.dumps(record, ensure_ascii=False) + "\n" for _, _, record in rows)
        print(f"wrote {len(rows):,} reviews to {path}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    convert(Path(sys.argv[1]), Path(sys.argv[2]))
