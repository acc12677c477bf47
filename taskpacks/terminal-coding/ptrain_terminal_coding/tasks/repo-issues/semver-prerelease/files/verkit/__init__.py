"""verkit: semantic versions."""

from verkit.ranges import satisfies
from verkit.version import Version

__all__ = ["Version", "satisfies"]
