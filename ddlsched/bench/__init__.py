"""The certified benchmark library (``ddlsched bench``): instances with proven optima or
certified intervals, re-checkable by anyone (:mod:`ddlsched.bench.library`,
:mod:`ddlsched.bench.verify`)."""
