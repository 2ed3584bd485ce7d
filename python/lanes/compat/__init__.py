"""Commands named as bmv2's and p4c's (`simple_switch`, `simple_switch_grpc`, `p4c-bm2-ss`, `p4c`),
installed into the virtual environment so tools that call those names run lanes unchanged."""
