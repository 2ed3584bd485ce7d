"""Idle timeout notifications: entries of tables with NOTIFY_CONTROL that stayed unhit past their
idle_timeout_ns are sent to the primary clients as IdleTimeoutNotification, each once per idle
period (an entry is reported again only after a hit). The switch keeps the hit times; a thread
here asks it every POLL_S which entries went idle."""

from __future__ import annotations

import threading
import time
from typing import Any

from lanes import _native
from lanes.p4runtime.proto import p4r

POLL_S = 0.05
QUIET_S = 0.5  # no client or no table with timeouts: ask less often


def loop(service: Any, stop: threading.Event) -> None:
    while not stop.is_set():
        ent = service.entities
        specs = {} if ent is None else {s.index: s for s in ent.pl.tables.values() if s.idle_notify}
        if not specs or not service.arb.primaries():
            stop.wait(QUIET_S)
            continue
        try:
            due = _native.p4rt_take_idle(service.sw)
        except _native.P4rtError:
            due = []
        entries = []
        for table, handle in due:
            spec = specs.get(table)
            if spec is None:
                continue
            try:
                e = _native.bm_entry(service.sw, table, handle)
                life = _native.p4rt_entry_life(service.sw, table, handle)
            except _native.P4rtError:
                continue  # deleted since
            te = ent.entry_message(spec, e)
            te.idle_timeout_ns = (life[1] or 0) if life else 0
            entries.append(te)
        if entries:
            msg = p4r.StreamMessageResponse(
                idle_timeout_notification=p4r.IdleTimeoutNotification(
                    table_entry=entries, timestamp=time.time_ns()
                )
            )
            for c in service.arb.primaries():
                c.send(msg)
            service.stats["idle_notifications"] += 1
        stop.wait(POLL_S)
