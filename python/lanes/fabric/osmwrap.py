"""`lanes-opensm`: OpenSM with lanes's routing engines loaded. OpenSM 3.3.23 loads an event plugin
only when its options file names it (event_plugin_name) and dlopens "lib<name>.so" through the
ordinary library search path, so this wrapper puts the plugin's directory on LD_LIBRARY_PATH, gives
OpenSM an options file naming the plugin (the user's own -F/--config file with that line added)
and then becomes OpenSM: `lanes-opensm -R lanes-ftree ...` takes every opensm argument."""

from __future__ import annotations

import os
import sys

from lanes.fabric import opensm, plugin

_CONFIG_FLAGS = ("-F", "--config")


def options_text(user_config: str | None) -> str:
    """The options OpenSM reads: the user's file, if any, with the plugin added to the event
    plugins it names (OpenSM takes a space-separated list)."""
    lines: list[str] = []
    plugins: list[str] = []
    if user_config is not None:
        with open(user_config, encoding="utf-8") as fh:
            for line in fh:
                words = line.split()
                if words and words[0] == "event_plugin_name":
                    plugins += [w for w in words[1:] if w != "(null)"]
                else:
                    lines.append(line.rstrip("\n"))
    if plugin.PLUGIN_NAME not in plugins:
        plugins.append(plugin.PLUGIN_NAME)
    return "\n".join([*lines, f"event_plugin_name {' '.join(plugins)}", ""])


def split_config(argv: list[str]) -> tuple[list[str], str | None]:
    """argv without -F/--config FILE, and that FILE."""
    rest: list[str] = []
    config = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in _CONFIG_FLAGS and i + 1 < len(argv):
            config, i = argv[i + 1], i + 2
            continue
        if a.startswith("--config="):
            config = a.split("=", 1)[1]
        else:
            rest.append(a)
        i += 1
    return rest, config


def main(argv: list[str] | None = None) -> int:
    args, config = split_config(list(sys.argv[1:] if argv is None else argv))
    lib = plugin.plugin_dir() / f"lib{plugin.PLUGIN_NAME}.so"
    if not lib.exists():
        print(
            f"lanes-opensm: the OpenSM plugin is not built: {lib} missing (run make setup)", file=sys.stderr
        )
        return 2
    try:
        text = options_text(config)
    except OSError as e:
        print(f"lanes-opensm: cannot read {config}: {e.strerror}", file=sys.stderr)
        return 2
    # An anonymous file that OpenSM inherits (no close-on-exec): it reads it as /proc/self/fd/N
    # at start and again on SIGHUP, and nothing is left behind on disk.
    fd = os.memfd_create("opensm-lanes.conf", 0)
    os.write(fd, text.encode())
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join(x for x in (str(lib.parent), env.get("LD_LIBRARY_PATH", "")) if x)
    exe = opensm._tool("opensm")
    os.execve(exe, [exe, "-F", f"/proc/self/fd/{fd}", *args], env)
    return 1  # not reached
