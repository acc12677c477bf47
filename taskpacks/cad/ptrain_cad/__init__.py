"""The CAD taskpack: the model writes OpenSCAD programs for mechanical parts from an engineer's
description, renders them, inspects what it built, and revises; a verifier compares the solid
with a hidden reference (IoU, volume, bounding box, surface distances)."""

from ptrain_cad.taskpack import Cad

TASKPACK = Cad()

__all__ = ["TASKPACK", "Cad"]
