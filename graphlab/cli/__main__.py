"""``python -m graphlab.cli``: the ``graphlab`` command, run as a module (the tests and child processes do)."""

import sys

from graphlab.cli import main

sys.exit(main())
