"""Celery tasks for the backfill queue: thin wrappers that load by id and call a service."""
