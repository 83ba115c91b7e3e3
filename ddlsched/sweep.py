"""The names of :mod:`ddlsched.sweeps` (sweeps on Dask, results in SQLite), importable from
here too; new code imports them from :mod:`ddlsched.sweeps`."""

from ddlsched.sweeps import *  # noqa: F403
from ddlsched.sweeps import __all__  # noqa: F401
