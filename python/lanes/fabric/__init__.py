"""InfiniBand fabric: topologies, routing engines, checks and OpenSM/ibsim runs."""
