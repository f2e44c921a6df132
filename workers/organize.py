"""Celery tasks for the organize queue: thin wrappers that load by id and call a service."""
