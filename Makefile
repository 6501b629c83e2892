# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
DEMO   ?= airline-tweets
LINTED := engine dashboard tests benchmarks scripts

.PHONY: run test lint typecheck install install-test browser clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed Makefile
	$(PY) -m pip install --quiet -e '.[test]'
	# pycanon checks the kanon method's releases in the tests; it pins exact versions of numpy, pandas, scipy and
	# more that its anonymity checks do not import, so it comes without its dependencies
	$(PY) -m pip install --quiet --no-deps pycanon==1.3.6
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

# Headless Chromium for the browser test: Debian's package where we are root; otherwise the test skips and says how.
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing headless Chromium (Debian package) for the browser test"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "Could not install chromium; the browser test will skip"; \
	else echo "chromium not found and not root: the browser test will skip (install it with: sudo apt-get install chromium)"; fi

run: install
	$(VENV)/bin/textsdc dashboard --data $(DEMO)

test: install-test browser
	$(PY) -m pytest -q

# Every check runs and reports even when an earlier one fails; settings in pyproject.toml ([tool.ruff],
# [tool.importlinter]: the layers, no Streamlit in the engine, no private name imported; [tool.mypy]).
lint: install-test
	@status=0; \
	$(VENV)/bin/ruff check $(LINTED) || status=1; \
	$(VENV)/bin/ruff format --check $(LINTED) || status=1; \
	$(VENV)/bin/lint-imports || status=1; \
	exit $$status

typecheck: install-test
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache build dist
