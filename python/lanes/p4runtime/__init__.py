"""P4Runtime server of the lanes switch (gRPC, the official p4runtime protos) and its clients."""
