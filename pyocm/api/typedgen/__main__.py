"""``python -m pyocm.api.typedgen``: regenerate ``pyocm/api/models``."""

from pyocm.api.typedgen import main

raise SystemExit(main())
