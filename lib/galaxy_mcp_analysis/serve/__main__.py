"""``python -m galaxy_mcp_analysis.serve``: run the launcher (see launcher.py).

Galaxy's Celery forkserver re-imports ``__main__``: nothing may start outside this guard.
"""

import sys

if __name__ == "__main__":
    from galaxy_mcp_analysis.serve.launcher import main

    sys.exit(main())
