"""notewise: notes with tags."""

from notewise.models import Note
from notewise.storage import Store

__version__ = "0.0.0"
__all__ = ["Note", "Store", "__version__"]
