"""The family interface's old place, kept for snnbench.network.family (being rewritten for issue 42):
the interface is snnbench.run.family, below every family (pyproject's contracts ignore this one import).
"""

from snnbench.run.family import Family

__all__ = ["Family"]
