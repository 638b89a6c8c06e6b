"""Entry point for ``python -m gradlab``."""

import sys

from gradlab.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
