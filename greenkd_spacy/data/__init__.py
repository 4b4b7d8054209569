"""Readers and converters: CoNLL-U, CoNLL column files, labeled text classification
files, raw text and JSONL (streamed), and the corpus readers spaCy configs name."""
