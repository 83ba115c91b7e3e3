"""Independent checks: the schedule verifier, the elastic runs' check, bounds, claims."""
