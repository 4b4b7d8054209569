"""Bad data files: every converter stops at a malformed line with its file,
line and a fix, or skips a documented construct and counts it. The commands are run
as a user runs them, through spaCy's CLI."""
import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

from greenkd_spacy.cli.app import app
from greenkd_spacy.data.conllu import check_conllu

GOOD = [
    "# text = I can't go",
    "1-2\tcan't\t_\t_\t_\t_\t_\t_\t_\t_",
    "1\tI\tI\tPRON\tPRP\t_\t3\tnsubj\t_\t_",
    "2\tca\tcan\tAUX\tMD\t_\t3\taux\t_\t_",
    "2.1\tgo\tgo\tVERB\t_\t_\t_\t_\t3:conj\t_",
    "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_",
    "",
]
# Line numbers: comment 1, range 2, I 3, ca 4, empty node 5, go 6.
CORRUPT = {
    "nine columns": (3, "1\tI\tI\tPRON\tPRP\t_\t3\tnsubj\t_", "expected 10 tab-separated columns, found 9"),
    "head out of range": (6, "3\tgo\tgo\tVERB\tVB\t_\t7\troot\t_\t_", "HEAD 7 is out of range"),
    "cycle": (6, "3\tgo\tgo\tVERB\tVB\t_\t2\troot\t_\t_", "0 tokens with HEAD 0"),
    "non-numeric head": (4, "2\tca\tcan\tAUX\tMD\t_\tx\taux\t_\t_", "HEAD 'x' is not a number"),
    "missing label": (4, "2\tca\tcan\tAUX\tMD\t_\t3\t_\t_\t_", "DEPREL is empty"),
    # The error points at the second root.
    # Reported at the second root (line 6).
    "two roots": (4, "2\tca\tcan\tAUX\tMD\t_\t0\taux\t_\t_", "2 tokens with HEAD 0"),
    "skipped ID": (6, "4\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_", "token ID '4' where 3 was expected"),
}


def write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_valid_file_skips_ranges_and_empty_nodes_and_converts(tmp_path):
    path = write(tmp_path / "good.conllu", GOOD)
    stats = check_conllu(path)
    assert (stats.sentences, stats.tokens, stats.multiword_ranges, stats.empty_nodes) == (1, 3, 1, 1)
    result = run("convert-conllu", path, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "skipped 1 multiword ranges and 1 empty nodes" in " ".join(result.output.split())
    (doc,) = DocBin().from_disk(tmp_path / "out" / "good.spacy").get_docs(spacy.blank("en").vocab)
    assert [(t.text, t.head.i, t.dep_) for t in doc] == [("I", 2, "nsubj"), ("ca", 2, "aux"), ("go", 2, "ROOT")]


@pytest.mark.parametrize("case", list(CORRUPT))
def test_malformed_conllu_names_file_line_and_fix(tmp_path, case):
    line_no, replacement, problem = CORRUPT[case]
    lines = list(GOOD)
    lines[line_no - 1] = replacement
    path = write(tmp_path / "bad.conllu", lines)
    with pytest.raises(ValueError) as err:
        check_conllu(path)
    text = str(err.value)
    reported_line = {"two roots": 6, "cycle": 3}.get(case, line_no)
    where = f"bad.conllu, line {reported_line}"
    assert where in text and problem in text and "Fix:" in text
    result = run("convert-conllu", path, tmp_path / "out")
    assert result.exit_code == 1 and not (tmp_path / "out" / "bad.spacy").exists()


def test_cycle_among_non_roots_is_found(tmp_path):
    lines = [
        "1\ta\ta\tX\tX\t_\t2\tdep\t_\t_",
        "2\tb\tb\tX\tX\t_\t1\tdep\t_\t_",
        "3\tc\tc\tX\tX\t_\t0\troot\t_\t_",
        "",
    ]
    with pytest.raises(ValueError, match=r"line 1: the heads form a cycle \(1 -> 2 -> 1\)"):
        check_conllu(write(tmp_path / "cycle.conllu", lines))


@pytest.mark.parametrize(
    "args,content,expected",
    [
        (("convert-conllu",), b"1\tI\tI\tPRON\tPRP\t_\t0\troot\t_\t_\n2\t\xff\n", "line 2: the bytes are not valid text"),
        (("convert-conll", "-f", "conll03"), b"EU NNP I-NP I-ORG\nrejects VBZ I-VP\n", "line 2: expected 4 space-separated columns"),
        (("convert-conll", "-f", "conll00"), b"Confidence NN B-NP\nin IN B-PP\nthe DT X-NP\n", "line 3: expected an IOB tag"),
        (("convert-conll", "-f", "conll03"), b"EU NNP I-NP I-ORG\nKoln NNP I-NP I-LOC \xe4\n", "line 2"),
        (("convert-textcat", "-f", "sst2"), b"sentence\tlabel\ngood one\t1\nno label here\n", "line 3: expected sentence<TAB>0|1"),
        (("convert-textcat", "-f", "sst2"), b"sentence\tlabel\ngood one\t1\nbad \xff bytes\t0\n", "line 3: the bytes are not valid text"),
        (("convert-textcat", "-f", "jsonl"), b'{"text": "fine", "label": 1}\n{"text": "broken"\n', "line 2: not valid JSON"),
    ],
)
def test_bad_data_files_fail_with_file_and_line(tmp_path, args, content, expected):
    path = tmp_path / "data.txt"
    path.write_bytes(content)
    output = tmp_path / "out" if args[0] == "convert-conllu" else tmp_path / "out.spacy"
    result = run(args[0], path, output, *args[1:])
    assert result.exit_code == 1
    assert f"data.txt, {expected}" in " ".join(result.output.split())
    assert not output.exists() or not any(output.iterdir())


@pytest.mark.parametrize("factory", ["greenkd_parser", "greenkd_ner", "greenkd_chunker"])
def test_uninitialized_component_says_call_initialize(factory):
    nlp = spacy.blank("en")
    nlp.add_pipe(factory)
    with pytest.raises(ValueError, match="E042.*initialize"):
        nlp("John lives in Paris .")


def test_corpus_reader_names_an_empty_corrupt_or_docless_file(tmp_path):
    from greenkd_spacy.data.corpus import create_corpus_reader, load_docs

    nlp = spacy.blank("en")
    (tmp_path / "empty.spacy").write_bytes(b"")
    (tmp_path / "corrupt.spacy").write_bytes(b"not a DocBin")
    DocBin().to_disk(tmp_path / "no-docs.spacy")
    cases = {"empty.spacy": "E043", "corrupt.spacy": "E043", "no-docs.spacy": "E044"}
    for name, code in cases.items():
        with pytest.raises(ValueError, match=code) as err:
            list(create_corpus_reader(tmp_path / name)(nlp))
        assert name in str(err.value)
        with pytest.raises(ValueError, match=code):
            load_docs(tmp_path / name, nlp.vocab)
    # In a directory, the bad file is the one named.
    (tmp_path / "dir").mkdir()
    DocBin(docs=[nlp("fine .")]).to_disk(tmp_path / "dir" / "a.spacy")
    (tmp_path / "dir" / "b.spacy").write_bytes(b"")
    with pytest.raises(ValueError, match="E043.*b.spacy"):
        list(create_corpus_reader(tmp_path / "dir")(nlp))


@pytest.mark.parametrize(
    "args,content,check",
    [
        (("convert-conll", "-f", "conll03"), b"-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n",
         lambda docs: [t.text for d in docs for t in d][0] == "EU" and len(docs) == 1),
        (("convert-conll", "-f", "conll03"), b"EU NNP B-NP B-ORG\nrejects VBZ B-VP O\n",
         lambda docs: [e.text for e in docs[0].ents] == ["EU"]),
        (("convert-textcat", "-f", "jsonl"), b'{"text": "fine", "label": "POS"}\n{"text": "bad", "label": "NEG"}\n',
         lambda docs: docs[0].text == "fine"),
        (("convert-conllu",), "\n".join(GOOD).encode("utf8") + b"\n",
         lambda docs: [t.text for t in docs[0]] == ["I", "ca", "go"]),
    ],
)
def test_a_byte_order_mark_is_skipped_and_said(tmp_path, args, content, check):
    path = tmp_path / "data.txt"
    path.write_bytes(b"\xef\xbb\xbf" + content)
    output = tmp_path / "out" if args[0] == "convert-conllu" else tmp_path / "out.spacy"
    with pytest.warns(UserWarning, match="byte-order mark"):
        result = run(args[0], path, output, *args[1:])
    assert result.exit_code == 0, result.output
    files = sorted(output.glob("*.spacy")) if output.is_dir() else [output]
    docs = [doc for file in files for doc in DocBin().from_disk(file).get_docs(spacy.blank("en").vocab)]
    assert check(docs) and not any("\ufeff" in doc.text for doc in docs)


@pytest.mark.parametrize(
    "args,content",
    [
        (("convert-conll", "-f", "conll03"), b""),
        (("convert-conll", "-f", "conll03"), b"\n\n"),
        (("convert-conll", "-f", "conll00"), b""),
        (("convert-textcat", "-f", "sst2"), b""),
        (("convert-textcat", "-f", "sst2"), b"sentence\tlabel\n"),
        (("convert-textcat", "-f", "jsonl"), b""),
    ],
)
def test_every_converter_refuses_empty_input_and_keeps_the_earlier_output(tmp_path, args, content):
    path = tmp_path / "data.txt"
    path.write_bytes(content)
    output = tmp_path / "out.spacy"
    output.write_bytes(b"an earlier good file")
    result = run(args[0], path, output, *args[1:])
    assert result.exit_code == 1
    assert "holds no" in result.output and "nothing was written" in " ".join(result.output.split())
    assert output.read_bytes() == b"an earlier good file"
