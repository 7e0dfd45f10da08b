"""`python -m bench NAME …`: the same as `python -m costa bench NAME …`."""

import sys

from bench.cli import main

sys.exit(main())
