"""Workload delay and delay-aware VM consolidation (seed 004, Paper VI).

Modules, one job each: `delay` (the queue recursion and per-bin statistics), `trace` (the in-memory
trace), `loader` (CSV per day), `synthetic` (generator of the paper's workload pattern), `packers`
(utilisation- and delay-based bin packing), `cv` (leave-one-day-out cross-validation), `paper`
(the published Tables I and II), `report` (Markdown tables and plots), `cli` (the subcommands).
"""
