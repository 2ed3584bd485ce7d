"""The `lanes switch` modes other commands pass on to it (`lanes lab run` starts switches with
them), named once; kept apart from lanes.switch.args, which loads gRPC."""

from __future__ import annotations

TM_MODELS = ["lanes", "bmv2"]  # paced TM, or the model of bmv2's
DROP_POLICIES = ["tail", "random"]  # what a full queue drops
# what wakes a data plane waiting for a departure early: "leading" (default) arrivals that lead
# their port and a top-class frame left queued after a turn; "high" also top-class arrivals
# behind a few of their own; "arrivals" only arrivals that lead their port (the default before)
WAKE_MODES = ["leading", "high", "arrivals"]
