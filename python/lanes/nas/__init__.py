"""Network-aware scheduling: find flows that die downstream, deprioritise them upstream."""
