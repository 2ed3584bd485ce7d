"""The `lanes` command itself: gRPC's own INFO log lines stay off the terminal unless asked for."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = "import os, lanes.cli, grpc; print(os.environ['GRPC_VERBOSITY'])"


def _verbosity(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"}
    if env_value is not None:
        env["GRPC_VERBOSITY"] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_grpc_core_logs_errors_only_unless_the_user_says_otherwise() -> None:
    assert _verbosity(None) == "ERROR"
    assert _verbosity("DEBUG") == "DEBUG"
