"""Student sizes: scale every width of the paper's parser to a fraction of its
trainable parameters (the Base-x / D-x models of the distillation paper)."""
from typing import Dict

# Table 7 of the paper, with our affix features and hashed tables.
FULL_PARSER_WIDTHS: Dict[str, int] = {
    "word_width": 100,
    "affix_width": 50,
    "pos_width": 100,
    "hidden_width": 400,
    "arc_mlp_size": 500,
    "label_mlp_size": 100,
}
FULL_PARSER_ROWS: Dict[str, int] = {"word_rows": 20000, "affix_rows": 5000, "pos_rows": 64}


def parser_parameters(widths: Dict[str, int], n_labels: int, depth: int = 3, rows: Dict[str, int] = FULL_PARSER_ROWS) -> int:
    """Trainable parameters of greenkd.BiaffineParser.v1 over greenkd.BiLSTMEncoder.v1."""
    word, affix, pos = widths["word_width"], widths["affix_width"], widths["pos_width"]
    hidden, arc, label = widths["hidden_width"], widths["arc_mlp_size"], widths["label_mlp_size"]
    embed = rows["word_rows"] * word + 2 * rows["affix_rows"] * affix + (rows["pos_rows"] * pos if pos else 0)
    n_in = word + 2 * affix + pos
    lstm = 0
    for layer in range(depth):
        layer_in = n_in if layer == 0 else 2 * hidden
        lstm += 2 * 4 * hidden * (layer_in + hidden + 2)
    enc = 2 * hidden
    head = enc  # root vector
    head += 2 * (enc * arc + arc) + 2 * (enc * label + label)
    head += (arc + 1) * arc + n_labels * (label + 1) ** 2
    return embed + lstm + head


def scaled_parser_widths(fraction: float, n_labels: int, depth: int = 3) -> Dict[str, int]:
    """Widths whose parameter count is closest to ``fraction`` of the full model's.

    All widths shrink by one common factor (found by bisection), as in the paper, where
    the students keep the full model's structure with smaller layers.
    """
    if not 0 < fraction <= 1:
        raise ValueError(f"(greenkd-spacy) fraction must be in (0, 1], got {fraction}")
    target = fraction * parser_parameters(FULL_PARSER_WIDTHS, n_labels, depth)
    low, high = 0.0, 1.0

    def widths_at(scale: float) -> Dict[str, int]:
        return {k: max(1, round(v * scale)) if v else 0 for k, v in FULL_PARSER_WIDTHS.items()}

    for _ in range(50):
        mid = (low + high) / 2
        if parser_parameters(widths_at(mid), n_labels, depth) < target:
            low = mid
        else:
            high = mid
    best = min((widths_at(low), widths_at(high)), key=lambda w: abs(parser_parameters(w, n_labels, depth) - target))
    return best
