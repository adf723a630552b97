"""``python -m serve.cli``: the ``purr`` command line."""

import sys

from serve.cli import main

sys.exit(main())
