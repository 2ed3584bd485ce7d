"""Message classes of P4Runtime, built from the official `p4runtime` package's descriptors.

The PyPI package ships generated modules in protoc's old style, which protobuf >= 4 refuses to
import. We read the serialized file descriptors out of those modules (without running them) and
build the classes in a private descriptor pool, so any protobuf version (with its fast C
implementation) works, and nothing clashes with other users of the default pool (e.g. finsy).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

from google.protobuf import any_pb2, descriptor_pool, message_factory

_P4_MODULES = [
    "p4.config.v1.p4types_pb2",
    "p4.config.v1.p4info_pb2",
    "p4.v1.p4data_pb2",
    "p4.v1.p4runtime_pb2",
]


def _serialized_descriptor(module: str) -> bytes:
    """The FileDescriptorProto bytes a generated module embeds (old or new protoc style)."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ImportError(f"{module} not found: install the 'p4runtime' package (and its dependencies)")
    tree = ast.parse(Path(spec.origin).read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg == "serialized_pb":
                return ast.literal_eval(kw.value)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "AddSerializedFile" and node.args:
            return ast.literal_eval(node.args[0])
    raise ImportError(f"{module}: no serialized file descriptor found")


def _build_pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
    # read, not imported: importing google.rpc.status_pb2 would register it in the default pool,
    # where finsy's own copy of status.proto then clashes with it
    pool.AddSerializedFile(_serialized_descriptor("google.rpc.status_pb2"))
    for m in _P4_MODULES:
        pool.AddSerializedFile(_serialized_descriptor(m))
    return pool


POOL = _build_pool()


class _Package:
    """Message classes of one proto package by attribute: `p4r.WriteRequest`."""

    def __init__(self, package: str) -> None:
        self._package = package
        self._cache: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        cls = self._cache.get(name)
        if cls is None:
            desc = POOL.FindMessageTypeByName(f"{self._package}.{name}")
            cls = message_factory.GetMessageClass(desc)
            self._cache[name] = cls
        return cls


p4r = _Package("p4.v1")
p4i = _Package("p4.config.v1")
rpc = _Package("google.rpc")
pb = _Package("google.protobuf")


def enum_value(message_cls: Any, enum: str, name: str) -> int:
    """Number of an enum value declared inside a message, e.g. ('Update', 'Type', 'INSERT')."""
    return message_cls.DESCRIPTOR.enum_types_by_name[enum].values_by_name[name].number


def enum_name(message_cls: Any, enum: str, number: int) -> str:
    v = message_cls.DESCRIPTOR.enum_types_by_name[enum].values_by_number.get(number)
    return v.name if v is not None else str(number)
