"""``python -m course_grader SUBMISSIONS --assignment A``: see :mod:`course_grader.grade`."""

import sys

from .cli import main

sys.exit(main())
