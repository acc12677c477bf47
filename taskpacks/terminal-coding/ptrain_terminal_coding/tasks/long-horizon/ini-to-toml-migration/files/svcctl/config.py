"""Loading a service's configuration (INI)."""

import configparser
from pathlib import Path

SERVICES = Path(__file__).resolve().parent.parent / "services"


def load(name):
    parser = configparser.ConfigParser()
    parser.read(SERVICES / f"{name}.ini")
    return {section: dict(parser[section]) for section in parser.sections()}


def names():
    return sorted(p.stem for p in SERVICES.glob("*.ini"))
