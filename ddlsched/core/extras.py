"""Optional dependencies: imported where needed, with the extra to install named on a miss.

``pip install ddlsched`` installs what the main job needs (the exact solvers, the policies,
the simulator, the checks). Three parts need more, each an extra of the package:

- ``plot``: matplotlib, for :mod:`ddlsched.plotting` and every ``--plot`` option;
- ``sweep``: Dask's distributed scheduler, for :mod:`ddlsched.sweeps` (``ddlsched sweep``);
- ``search``: hypothesis, for the adversarial search (``ddlsched check --adversarial``).

``pip install 'ddlsched[all]'`` installs all three; ``[dev]`` adds the test and docs tools.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ddlsched.core.model import InputError

EXTRAS = {
    "matplotlib": "plot",
    "dask": "sweep",
    "distributed": "sweep",
    "hypothesis": "search",
    "notebook": "notebooks",
}
"""The extra of ``ddlsched`` that installs each optional top-level package."""


class MissingExtra(InputError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it.

    An :class:`~ddlsched.core.model.InputError` (the command line prints it as one line,
    exit 2) and an :class:`ImportError` (code catching import failures sees one).
    """


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module`` (a dotted name whose top-level package is in :data:`EXTRAS`).

    Raises
    ------
    MissingExtra
        If it is not installed: "<purpose> needs <package>: pip install 'ddlsched[<extra>]'".
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        top = module.partition(".")[0]
        if top not in EXTRAS or error.name is None or error.name.partition(".")[0] != top:
            raise  # something the optional package itself needs: not ours to explain
        extra = EXTRAS[top]
        raise MissingExtra(
            f"{purpose} needs {top}, which is not installed: pip install 'ddlsched[{extra}]'"
        ) from None
