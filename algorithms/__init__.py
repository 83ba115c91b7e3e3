"""Online policies (A-SRPT and baselines), GPU mapping, prediction, simulation."""
