"""Independent checks of the theory: the schedule verifier, bounds, claims."""
