"""greenkd-spacy: distilled and pruned spaCy components.

Importing this package is cheap on purpose: spaCy finds the factories,
architectures, readers and commands through entry points and imports the
modules that define them only when a config or pipeline asks for them.
"""

__version__ = "0.1.0"
