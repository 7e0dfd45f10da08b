"""`python -m costa …` entry point."""

from costa.cli import main

raise SystemExit(main())
