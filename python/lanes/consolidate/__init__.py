"""Workload delay and delay-aware VM consolidation (Paper VI of the InfiniBand cloud studies).

Modules, one job each: `delay` (the queue recursion and per-bin statistics), `trace` (the in-memory
trace), `loader` (CSV per day), `paths` (where the PlanetLab trace is found), `synthetic` (generator of
the paper's workload pattern), `packers` (utilisation- and delay-based bin packing; the delay packers'
hot loop also runs in Rust, lanes._native.consolidate_pack_delay), `cv` (leave-one-day-out
cross-validation), `paper` (the published Tables I and II), `report` (Markdown tables and plots of one
run), `run` (one run to a directory), `full_report` (PlanetLab and synthetic runs in one report), `cli`
(the subcommands).
"""
