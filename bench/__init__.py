"""Benchmarks in folders by concern (search, ingest, chat, inbox, ops) and what they share (common).

Each script puts the repository on ``sys.path`` first, so that it runs both as
``python bench/<concern>/<script>.py`` and as ``python -m bench.<concern>.<script>``.
"""

from pathlib import Path

# The repository: scratch files go under its var/, and its sample_folder/ is indexed by several benches.
ROOT = Path(__file__).resolve().parent.parent
