"""``python -m dfrank``: the dfrank command line (as the ``dfrank`` command)."""

import sys

from .cli import main

sys.exit(main())
