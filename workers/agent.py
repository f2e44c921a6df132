"""Celery tasks for the agent queue: thin wrappers that load by id and call a service."""
