"""Hyperspool's Python SDK: durable workflows as ordinary scripts.

``from hyperspool import script`` gives the durable calls; the exceptions are in
``hyperspool.errors`` (and re-exported here and in ``script``).
"""

from __future__ import annotations

from . import script
from .errors import AgentUnavailable, HyperspoolError, ScriptError, StepFailed

__all__ = ["script", "StepFailed", "ScriptError", "AgentUnavailable", "HyperspoolError"]
__version__ = "0.1.0"
