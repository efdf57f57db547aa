from __future__ import annotations

import sys
from pathlib import Path

# The tests run against the source tree, installed or not.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
