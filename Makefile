# Two commands do all set-up on a fresh machine:
#   make chat   — create .venv, install, build the sample index, start the REPL
#   make test   — create .venv, install, run the whole test suite (unit, REPL, Chroma server, end-to-end)
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)

.PHONY: chat test setup clean-index

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first: 2.13.0 resolves to the CPU wheel here; a bare "torch" would pull a CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[local-llm,dev]'
	touch $(STAMP)

setup: $(STAMP)

chat: $(STAMP)
	$(BIN)/python -m app.chat $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest $(ARGS)

clean-index:
	rm -rf .turnrag/index
