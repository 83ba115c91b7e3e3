"""Experiments on the top floor: compare, check, adversarial search.

- :mod:`~ddlsched.experiments.compare`: online methods against proven optima;
- :mod:`~ddlsched.experiments.check`: every claim of the theory on one
  instance or many;
- :mod:`~ddlsched.experiments.adversarial`: a hypothesis search for bad
  instances of guided A-SRPT.
"""

from ddlsched.experiments.adversarial import adversarial_theorem1
from ddlsched.experiments.check import (
    CheckReport,
    ClaimTally,
    RandomCheck,
    check_generator,
    check_instance,
    check_random,
    claim_family,
)
from ddlsched.experiments.compare import (
    CompareConfig,
    CompareReport,
    InstanceComparison,
    compare,
)

__all__ = [
    "CheckReport",
    "ClaimTally",
    "CompareConfig",
    "CompareReport",
    "InstanceComparison",
    "RandomCheck",
    "adversarial_theorem1",
    "check_generator",
    "check_instance",
    "check_random",
    "claim_family",
    "compare",
]
