"""Mininet integration: the thesis's topologies with lanes switches (or a kernel-bridge peer)."""
