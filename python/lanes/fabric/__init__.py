"""InfiniBand fabric: topologies, routing engines, checks and OpenSM/ibsim runs (issue 6)."""
