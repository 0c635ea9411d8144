"""Setuptools shim: the data files (man pages, shell completions) in editable installs too.

pyproject.toml declares everything; this file only fixes one gap. setuptools' PEP 660 editable wheel
installs the data files only when the distribution answers `has_data()`, a method its Distribution does
not have (it has `has_data_files()`), so `pip install -e .` left `man gdpcli-sgd` without a page, and
removed the one `pip install .` had put there. With this answer both installs put the same files under
the prefix (tests/test_packaging.py).
"""

from setuptools import setup
from setuptools.dist import Distribution


class _Distribution(Distribution):
    def has_data(self) -> bool:
        """Whether there are data files to install (what the editable wheel asks before installing them)."""
        return self.has_data_files()


setup(distclass=_Distribution)
