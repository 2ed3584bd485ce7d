# The Rust extension (crates/py), built by maturin: its functions and classes are typed as Any
# until the bindings ship their own stubs.
from typing import Any

def __getattr__(name: str) -> Any: ...
