"""`python -m dispatchtorch_conformance`: the same as the `dispatchtorch-conformance` command."""
import sys

from .cli import main

sys.exit(main())
