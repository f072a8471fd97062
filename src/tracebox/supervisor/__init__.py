"""Processes and loops: ``tracebox serve`` is the one supervisor (ARCHITECTURE contract 10).

- ``units``: the registry of background loops (the digest; alert sender, cleanup...).
- ``host``: the background process running every unit as a supervised thread.
- ``process``: serve's thread keeping that process alive and stopping it in time.
- ``heartbeat``: what each unit reports, read by ``/-/health`` (``tracebox.health``).
- ``web``: the web workers (uvicorn) with serve's own signal handling.
"""
