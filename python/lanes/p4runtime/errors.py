"""P4Runtime errors: a gRPC status code and a one-line message."""

from __future__ import annotations

import grpc


class P4RTError(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(msg: str) -> P4RTError:
    return P4RTError(grpc.StatusCode.INVALID_ARGUMENT, msg)


def not_found(msg: str) -> P4RTError:
    return P4RTError(grpc.StatusCode.NOT_FOUND, msg)


def already_exists(msg: str) -> P4RTError:
    return P4RTError(grpc.StatusCode.ALREADY_EXISTS, msg)


def unimplemented(msg: str) -> P4RTError:
    return P4RTError(grpc.StatusCode.UNIMPLEMENTED, msg)


def precondition(msg: str) -> P4RTError:
    return P4RTError(grpc.StatusCode.FAILED_PRECONDITION, msg)


def denied(msg: str) -> P4RTError:
    return P4RTError(grpc.StatusCode.PERMISSION_DENIED, msg)


_BY_NUMBER = {c.value[0]: c for c in grpc.StatusCode}


def code_from_number(n: int) -> grpc.StatusCode:
    return _BY_NUMBER.get(n, grpc.StatusCode.UNKNOWN)
