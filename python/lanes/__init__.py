"""lanes: traffic management for HPC traffic on shared clouds."""

__version__ = "0.1.0"
