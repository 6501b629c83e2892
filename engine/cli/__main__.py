"""`python -m engine.cli`: the `textsdc` command."""

import sys

from engine.cli import main

sys.exit(main())
