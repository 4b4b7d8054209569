"""The layers of docs/architecture.md, checked on the source: components import the
distillation contract and codecs but not the loop or the cache, the distillation
package imports no component, readers import no loop, and no import cycle exists."""
import ast
from pathlib import Path
from typing import Dict, Set

PACKAGE = Path(__file__).parent.parent / "greenkd_spacy"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path) -> Set[str]:
    """greenkd_spacy modules a file imports, at module level or inside functions."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        for candidate in candidates:
            if candidate.startswith("greenkd_spacy") and (
                (PACKAGE.parent / candidate.replace(".", "/")).with_suffix(".py").exists()
                or (PACKAGE.parent / candidate.replace(".", "/") / "__init__.py").exists()
            ):
                found.add(candidate)
    found.discard(name)
    return found


def graph() -> Dict[str, Set[str]]:
    return {module_name(path): imports_of(path) for path in PACKAGE.rglob("*.py")}


def test_components_import_the_contract_not_the_loop():
    loop_side = ("greenkd_spacy.distillation.loop", "greenkd_spacy.distillation.teacher_pass", "greenkd_spacy.distillation.cache",
                 "greenkd_spacy.distillation.annotate", "greenkd_spacy.distillation.worker",
                 "greenkd_spacy.distillation.ray_backend", "greenkd_spacy.training")
    for module, imported in graph().items():
        if module.startswith("greenkd_spacy.pipeline"):
            assert not [m for m in imported if m.startswith(loop_side)], module


def test_distillation_and_readers_import_no_component():
    for module, imported in graph().items():
        if module.startswith(("greenkd_spacy.distillation", "greenkd_spacy.data")):
            assert not [m for m in imported if m.startswith("greenkd_spacy.pipeline")], module
        if module.startswith("greenkd_spacy.data"):
            assert not [m for m in imported if m.startswith(("greenkd_spacy.distillation", "greenkd_spacy.training"))], module


def test_no_import_cycle():
    edges = graph()
    state: Dict[str, int] = {}

    def visit(module: str, path: list) -> None:
        state[module] = 1
        for target in edges.get(module, ()):
            if target not in edges:
                continue
            assert state.get(target) != 1, " -> ".join(path + [module, target])
            if target not in state:
                visit(target, path + [module])
        state[module] = 2

    for module in edges:
        if module not in state:
            visit(module, [])
