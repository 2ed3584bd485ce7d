"""The lab's P4Runtime controller of one switch, over lanes.p4runtime.client: becomes primary,
pushes the program (P4Info + bmv2 JSON) and writes the thesis's table entries, one Update per
Write so each counts as one control-plane write. Entities are built by name
(lanes.p4runtime.named); a failure is a LanesError naming the switch and the write."""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import grpc

from lanes.emu.topo import Route
from lanes.errors import LanesError
from lanes.lab.control import class_action
from lanes.p4runtime.client import Client, update
from lanes.p4runtime.named import CellKind, Key, P4InfoNames, clone_session, lpm_key
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.proto import enum_value, p4r

V = TypeVar("V")


class P4RuntimeTables:
    """ipv4_lpm, src_ip_prio and the cells of one switch running tm_basic (or another program
    with those names) through P4Runtime."""

    channel = "p4runtime"

    def __init__(
        self, name: str, port: int, device_id: int, p4info: Path, program: Path, election_id: int = 1
    ) -> None:
        self.name = name
        self.client = Client(f"127.0.0.1:{port}", device_id=device_id, election_id=election_id)
        info = load_p4info(p4info)
        self.names = P4InfoNames(info)
        with self._failure("connect"):
            self.client.wait_ready(timeout=15)
            self.client.become_primary()
        with self._failure("SetForwardingPipelineConfig"):
            self.client.set_pipeline(info, program.read_bytes())

    @contextmanager
    def _failure(self, what: str) -> Iterator[None]:
        """Any failure of the client inside, as one LanesError naming this switch and `what`."""
        try:
            yield
        except grpc.RpcError as e:
            raise LanesError(f"{self.name}: {what}: {e.details()}") from None
        except (ConnectionError, PermissionError) as e:
            raise LanesError(f"{self.name}: {e}") from None
        except queue.Empty:
            raise LanesError(f"{self.name}: {what}: no answer from the P4Runtime server") from None
        except LanesError as e:  # a name the program lacks
            raise LanesError(f"{self.name}: {e}") from None

    def _write(self, kind: str, what: str, field: str, build: Callable[[], Any]) -> None:
        """One Write of one Update whose entity `field` (table_entry, ...) `build` makes."""
        with self._failure(f"Write {kind} {what}"):
            self.client.write([update(enum_value(p4r.Update, "Type", kind), **{field: build()})])

    def _table_write(self, kind: str, table: str, keys: list[Key], action: str, values: list[int]) -> None:
        entry = partial(self.names.table_entry, table, keys, action, values)
        self._write(kind, f"{table} {[k[1:] for k in keys]}", "table_entry", entry)

    def write_exact(self, kind: str, table: str, keys: list[int], action: str, values: list[int]) -> None:
        """INSERT or MODIFY an entry of an all-exact table: one Write of one Update."""
        self._table_write(kind, table, [("exact", k, 0) for k in keys], action, values)

    def add_route(self, r: Route) -> None:
        mac = int(r.mac.replace(":", ""), 16)
        self._table_write("INSERT", "ipv4_lpm", [lpm_key(r.prefix)], "ipv4_forward", [mac, r.port])

    def add_class(self, prefix: str, prio: int, rate: int, quantum: int, burst: int = 0) -> None:
        action, params = class_action(prio, rate, quantum, burst)
        self._table_write("INSERT", "src_ip_prio", [lpm_key(prefix)], action, params)

    def modify_class(self, prefix: str, prio: int, rate: int, quantum: int, burst: int = 0) -> None:
        action, params = class_action(prio, rate, quantum, burst)
        self._table_write("MODIFY", "src_ip_prio", [lpm_key(prefix)], action, params)

    def write_register(self, name: str, index: int, value: int) -> None:
        """Set one register cell (a MODIFY, as P4Runtime has registers)."""
        entry = partial(self.names.register_entry, name, index, value)
        self._write("MODIFY", f"register {name}[{index}]", "register_entry", entry)

    def add_clone_session(self, session: int, port: int) -> None:
        """A clone (mirror) session: copies cloned to `session` leave on `port`."""
        entry = partial(clone_session, session, port)
        self._write("INSERT", f"clone session {session}", "packet_replication_engine_entry", entry)

    def read_counters(self, cells: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[int, int]]:
        """(packets, bytes) of indexed counter cells, by (counter name, index), in one Read."""
        return self._read_cells(
            "counter", cells, lambda e: (int(e.data.packet_count), int(e.data.byte_count))
        )

    def read_registers(self, cells: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Values of register cells, by (register name, index), in one Read."""
        return self._read_cells("register", cells, lambda e: int.from_bytes(e.data.bitstring or b"\0", "big"))

    def _read_cells(self, kind: CellKind, cells: list[tuple[str, int]], value: Callable[[Any], V]) -> dict[tuple[str, int], V]:  # fmt: skip
        with self._failure(f"Read {kind}s"):
            answer = self.client.read(self.names.cell_entities(kind, cells))
        out: dict[tuple[str, int], V] = {}
        for ent in answer:
            e = getattr(ent, f"{kind}_entry")
            out[(self.names.cell_name(kind, getattr(e, f"{kind}_id")), e.index.index)] = value(e)
        return out

    def close(self) -> None:
        self.client.close()
