"""P4Runtime digests: DigestEntry configs (Write/Read), the DigestLists sent on the primary
client's stream, and their acks.

The data plane queues what each `digest(...)` call in ingress carried; a thread here takes
them, keeps only those of digests the controller configured, and batches them per digest:
a list goes out when it holds `max_list_size` items (0: no limit) or its oldest item has
waited `max_timeout_ns` (0: at once). Data sent in a list that is not acked yet is not sent
again until the ack comes or `ack_timeout_ns` passes (0: no such wait), and the same data
waiting in a batch is kept once: a learning switch that digests every packet of an unknown
source tells the controller once, not once per packet."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from lanes.p4runtime.errors import already_exists, invalid, not_found
from lanes.p4runtime.proto import p4r
from lanes.p4runtime.values import DELETE, INSERT, canonical

POLL_MS = 20  # how long the thread waits for digests before checking its timers
IDLE_S = 0.1  # how often it drops unwanted digests while no digest is configured
Data = tuple[bytes, ...]


@dataclass
class DigestConfig:
    max_timeout_ns: int
    max_list_size: int
    ack_timeout_ns: int


@dataclass
class _Batch:
    items: list[Data] = field(default_factory=list)
    since: float = 0.0  # monotonic time of the oldest item


class DigestEngine:
    def __init__(self, sw: Any, primaries: Any) -> None:
        self.sw = sw
        self.primaries = primaries  # () -> clients to send to
        self.lock = threading.Lock()
        self.by_list: dict[int, int] = {}  # learn list index -> digest id
        self.known: set[int] = set()
        self.configs: dict[int, DigestConfig] = {}
        self.batches: dict[int, _Batch] = {}
        self.unacked: dict[int, dict[Data, float]] = {}  # digest id -> data -> time sent
        # (digest id, list id) -> (its data, when it was sent), until acked or timed out
        self.lists: dict[tuple[int, int], tuple[list[Data], float]] = {}
        self.next_list_id = 1
        self.stats = {"digest_lists": 0, "digests_sent": 0, "digests_suppressed": 0}

    def set_pipeline(self, pl: Any, keep: bool = False) -> None:
        """A new pipeline's digests; configs go unless `keep` (reconcile) and the id remains."""
        with self.lock:
            self.by_list = {d.list_index: d.id for d in pl.digests.values()}
            self.known = set(pl.digests)
            old = self.configs if keep else {}
            self.configs = {i: c for i, c in old.items() if i in self.known}
            self.batches.clear()
            self.unacked.clear()
            self.lists.clear()

    # ---- Write / Read ----

    def write(self, typ: int, e: Any) -> None:
        with self.lock:
            if e.digest_id not in self.known:
                raise not_found(f"no digest with id {e.digest_id}")
            exists = e.digest_id in self.configs
            if typ == DELETE:
                if not exists:
                    raise not_found(f"digest {e.digest_id} is not configured")
                del self.configs[e.digest_id]
                self.batches.pop(e.digest_id, None)
                self.unacked.pop(e.digest_id, None)
                return
            if typ == INSERT and exists:
                raise already_exists(f"digest {e.digest_id} is configured already")
            if typ != INSERT and not exists:
                raise not_found(f"digest {e.digest_id} is not configured")
            if not e.HasField("config"):
                raise invalid(f"digest {e.digest_id}: a config is required")
            c = e.config
            if c.max_timeout_ns < 0 or c.max_list_size < 0 or c.ack_timeout_ns < 0:
                raise invalid(f"digest {e.digest_id}: config values must not be negative")
            self.configs[e.digest_id] = DigestConfig(c.max_timeout_ns, c.max_list_size, c.ack_timeout_ns)

    def read(self, want: Any) -> list[Any]:
        with self.lock:
            if want.digest_id and want.digest_id not in self.known:
                raise not_found(f"no digest with id {want.digest_id}")
            out = []
            for i, c in sorted(self.configs.items()):
                if want.digest_id and i != want.digest_id:
                    continue
                d = p4r.DigestEntry(digest_id=i)
                d.config.max_timeout_ns = c.max_timeout_ns
                d.config.max_list_size = c.max_list_size
                d.config.ack_timeout_ns = c.ack_timeout_ns
                out.append(p4r.Entity(digest_entry=d))
            return out

    def ack(self, a: Any) -> None:
        """A DigestListAck: the list's data may be sent again."""
        with self.lock:
            data, _ = self.lists.pop((a.digest_id, a.list_id), ([], 0.0))
            sent = self.unacked.get(a.digest_id, {})
            for d in data:
                sent.pop(d, None)

    # ---- the data plane side ----

    def loop(self, stop: threading.Event) -> None:
        while not stop.is_set():
            if not self.configs:
                # nobody wants digests: drop what ingress made, without waking 50 times a second
                self.sw.wait_digests(0)
                stop.wait(IDLE_S)
                continue
            items = self.sw.wait_digests(POLL_MS)
            if not items and not self.sw.is_running():
                stop.wait(0.05)
            self.take(items, time.monotonic())

    def take(self, items: list[tuple[int, list[bytes]]], now: float) -> None:
        """Batch what the data plane generated, then send what is due."""
        with self.lock:
            for index, fields in items:
                did = self.by_list.get(index)
                cfg = self.configs.get(did) if did is not None else None
                if did is None or cfg is None:
                    continue  # not configured: the controller does not want it
                data = tuple(canonical(int.from_bytes(f, "big")) for f in fields)
                batch = self.batches.setdefault(did, _Batch())
                if data in self.unacked.get(did, {}) or data in batch.items:
                    self.stats["digests_suppressed"] += 1
                    continue
                if not batch.items:
                    batch.since = now
                batch.items.append(data)
            due = self._due(now)
        for msg in due:
            for c in self.primaries():
                c.send(msg)

    def _acked_or_late(self, did: int, sent_at: float, now: float) -> bool:
        """Whether data sent at `sent_at` may be sent again (no config left, or its ack timed out)."""
        cfg = self.configs.get(did)
        return cfg is None or now - sent_at >= cfg.ack_timeout_ns / 1e9

    def _due(self, now: float) -> list[Any]:
        out = []
        for did, sent in self.unacked.items():
            for d in [d for d, at in sent.items() if self._acked_or_late(did, at, now)]:
                del sent[d]
        for key in [k for k, (_, at) in self.lists.items() if self._acked_or_late(k[0], at, now)]:
            del self.lists[key]
        for did, batch in self.batches.items():
            cfg = self.configs[did]
            size = cfg.max_list_size or len(batch.items)
            while batch.items and (len(batch.items) >= size or now - batch.since >= cfg.max_timeout_ns / 1e9):
                chunk, batch.items = batch.items[:size], batch.items[size:]
                out.append(self._list(did, chunk, cfg, now))
                batch.since = now
        return out

    def _list(self, did: int, chunk: list[Data], cfg: DigestConfig, now: float) -> Any:
        list_id = self.next_list_id
        self.next_list_id += 1
        if cfg.ack_timeout_ns:
            self.lists[(did, list_id)] = (chunk, now)
            sent = self.unacked.setdefault(did, {})
            for d in chunk:
                sent[d] = now
        dl = p4r.DigestList(digest_id=did, list_id=list_id, timestamp=time.time_ns())
        for d in chunk:
            members = dl.data.add().struct.members
            for b in d:
                members.add(bitstring=b)
        self.stats["digest_lists"] += 1
        self.stats["digests_sent"] += len(chunk)
        return p4r.StreamMessageResponse(digest=dl)
