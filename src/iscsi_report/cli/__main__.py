"""``python -m iscsi_report.cli``: the same console script as ``iscsi-report``."""

import sys

from iscsi_report.cli import main

sys.exit(main())
