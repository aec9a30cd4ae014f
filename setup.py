from setuptools import find_packages, setup

setup(
    name="parlai_acute",
    version="0.1.0",
    description="Human and automatic evaluation of open-domain dialogue models on ParlAI and Mephisto",
    python_requires=">=3.11",
    packages=find_packages(include=["parlai_acute", "parlai_acute.*"]),
    include_package_data=True,
    package_data={"parlai_acute": ["**/*.json", "**/*.jsonl", "**/*.html", "**/*.js", "**/*.css", "**/*.yaml", "**/*.txt"]},
    # Runtime dependencies are pinned in requirements/lock.txt and installed with --no-deps:
    # parlai 1.7.2 and mephisto 1.1.1 declare pins that cannot be resolved together.
    install_requires=[],
    entry_points={"console_scripts": ["parlai-acute=parlai_acute.scripts.main:main"]},
)
