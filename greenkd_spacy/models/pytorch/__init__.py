"""Plain PyTorch modules, testable without spaCy or thinc."""
