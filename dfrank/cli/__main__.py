"""``python -m dfrank.cli``: the dfrank command line."""

import sys

from . import main

sys.exit(main())
