# Two commands do all set-up on a fresh machine:
#   make chat   — create .venv, install, build the sample index, start the REPL
#   make test   — create .venv, install, run the whole test suite (unit, REPL, service, browser,
#                 Chroma and Redis servers, end-to-end with the local model)
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
# Programs the tests start for real (Debian packages); installed when missing and we may.
# pg_ctlcluster stands for PostgreSQL (its server binaries are not on PATH on Debian).
SYSTEM_PROGRAMS := redis-server chromium pg_ctlcluster pandoc

.PHONY: chat test serve setup system-deps clean-index

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first: 2.13.0 resolves to the CPU wheel here; a bare "torch" would pull a CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[local-llm,dev]'
	touch $(STAMP)

system-deps:
	@missing=""; for p in $(SYSTEM_PROGRAMS); do command -v $$p >/dev/null || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	    echo "installing$$missing (apt-get)"; apt-get update -qq && apt-get install -y -qq redis-server chromium postgresql pandoc >/dev/null; \
	  else echo "warning:$$missing missing (install redis-server, chromium, postgresql and pandoc); their tests will be skipped"; fi; \
	fi

setup: $(STAMP)

chat: $(STAMP)
	$(BIN)/python -m app.chat $(ARGS)

serve: $(STAMP)
	$(BIN)/python -m app.serve $(ARGS)

test: $(STAMP) system-deps
	$(BIN)/python -m pytest $(ARGS)

clean-index:
	rm -rf .turnrag/index
