"""The `lanes switch` modes other commands pass on to it (`lanes lab run` starts switches with
them), named once; kept apart from lanes.switch.args, which loads gRPC."""

from __future__ import annotations

TM_MODELS = ["lanes", "bmv2"]  # paced TM, or the model of bmv2's
DROP_POLICIES = ["tail", "random"]  # what a full queue drops
WAKE_MODES = ["leading", "high"]  # which arrivals wake a data plane waiting for a departure
