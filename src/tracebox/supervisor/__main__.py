"""``python -m tracebox.supervisor``: the background process, as ``serve`` starts it.

A plain child process (``supervisor.process``) rather than a multiprocessing one: spawn
starts a resource tracker process beside it (~13 MB, and nothing to track) and imports
serve's ``__main__`` again. Settings come from the environment, which ``serve`` filled
(``server.export_settings``) as it does for its web workers.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from tracebox.config import Settings
from tracebox.supervisor.host import run_background


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tracebox.supervisor", description=__doc__)
    parser.add_argument("--restarts", type=int, default=0, help="restarts so far (heartbeats)")
    args = parser.parse_args(argv)
    run_background(Settings(), args.restarts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
