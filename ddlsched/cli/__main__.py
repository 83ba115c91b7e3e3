"""``python -m ddlsched.cli``: the same as the ``ddlsched`` command."""

import sys

from ddlsched.cli import main

sys.exit(main())
