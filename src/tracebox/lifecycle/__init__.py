"""Bounded storage: retention, the disk budget, deletions, dictionary training and giving
space back, done in small batches by one supervised loop (``cleanup.CleanupLoop``).

Only raw data is removed (events, and what belongs to them or has its own age:
attachments, logs, artifacts, registered in ``kinds.PRUNABLE_KINDS``); errors, their
counts, first and last seen, hourly counts and release health are never changed by
retention. SQL stays in ``store``; this package decides what goes, when, and how much
per transaction.
"""
