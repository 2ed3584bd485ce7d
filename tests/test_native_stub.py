"""The type stub of the extension (python/lanes/_native.pyi) names exactly what the built module
exports: a binding added in Rust without its stub entry, or a stub entry for a binding that is
gone, fails here (mypy would otherwise call the missing one fine, or not know the new one)."""

from __future__ import annotations

import ast
from pathlib import Path

from lanes import _native

STUB = Path(__file__).resolve().parents[1] / "python" / "lanes" / "_native.pyi"


def stub_names() -> set[str]:
    """Top-level names the stub declares; leading-underscore ones are its own type aliases."""
    names: set[str] = set()
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_") or n == "__version__"}


def module_names() -> set[str]:
    dunder = {n for n in dir(_native) if n.startswith("__") and n.endswith("__")}
    return set(dir(_native)) - dunder | {"__version__"}


def test_stub_declares_every_exported_name_and_no_other() -> None:
    stub, module = stub_names(), module_names()
    assert sorted(module - stub) == [], "exported by the extension, missing from _native.pyi"
    assert sorted(stub - module) == [], "in _native.pyi, not exported by the extension"


def test_stub_has_no_catch_all() -> None:
    """A module-level __getattr__ would make every misspelt name type-check as Any."""
    assert "__getattr__" not in {
        n.name for n in ast.parse(STUB.read_text()).body if isinstance(n, ast.FunctionDef)
    }


def test_stub_classes_are_the_modules_classes() -> None:
    """Each class the stub declares is a class in the module (not a function or constant), and
    each exception it declares is one."""
    classes = {n.name: n for n in ast.parse(STUB.read_text()).body if isinstance(n, ast.ClassDef)}
    for name, node in classes.items():
        obj = getattr(_native, name)
        assert isinstance(obj, type), name
        bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
        assert ("Exception" in bases) == issubclass(obj, Exception), name
