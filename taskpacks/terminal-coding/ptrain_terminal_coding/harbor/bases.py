"""Which FROM images map onto terminal-coding's image (Debian bookworm), and what each needs from Debian.

No registry can be pulled here, and image builds reach only Debian's apt mirror, PyPI and npm, so a
task's base image is replaced by terminal-coding's own, plus the Debian packages that stand in for
what the base image shipped. One table per kind of base, each row with its reason:

- **Debian, Ubuntu, python, buildpack-deps**: the image itself (Debian bookworm, Python 3.11). An
  Ubuntu base keeps its toolchains' versions where Debian has them: UBUNTU says what a release's
  packages are, so `FROM ubuntu:24.04` plus `apt-get install golang-go` gets noble's Go 1.22 (from
  bookworm-backports) rather than bookworm's 1.19, which go.mod files saying `go 1.22` refuse.
- **Go** (`golang:1.22-bookworm`, any registry): Debian's `golang-X.Y-go`. GO says which suite has each
  version; the lowest version at or above the one asked is taken (Go is backward compatible, and a
  go.mod's `go` line is a minimum), with a warning when it differs. The suite is added with a pin
  (PIN_PRIORITY, below the 100 of backports and the 500 of bookworm) so that nothing but the toolchain
  named on the install line (`pkg/suite`) ever comes from it. trixie-backports' golang-1.26-go
  depends only on its -src package, so it installs on bookworm. The environment is the official
  image's (GOPATH=/go, the toolchain first on PATH, /usr/local/go a link to it), plus GOCACHE in /tmp:
  the sandbox's root filesystem (HOME included) is read-only, and /tmp is a tmpfs the sandbox user owns.
- **JDK** (`eclipse-temurin:17...`, `openjdk:17...`): bookworm's openjdk-17-jdk-headless, the only JDK
  bookworm has; JAVA_HOME as temurin sets it (/opt/java/openjdk, a link to Debian's JDK). An older
  major version asked is a warning (Java runs older code); a newer one is refused. The Kotlin
  compiler those Dockerfiles download from GitHub stays a refused download: Debian's kotlin is
  1.3.31, and measured on the 18 temurin tasks of purple29th-tbench-2, their 1.9 sources (trailing
  commas, `continue` in `when`, minByOrNull, ArrayDeque, stackTraceToString) do not compile with it.
- **GCC** (`gcc:13.3.0-bookworm`): bookworm's gcc, g++ and make (12.2, already in the image's
  build-essential), with a warning naming both versions.
- **Node** (`node:20.18.1-bookworm`): bookworm's nodejs (18.19) and npm, with a warning.

Anything else (alpine, .NET, ...) is refused with the list of what maps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ptrain.errors import ConfigError

MIRROR = "http://deb.debian.org/debian"
PIN_PRIORITY = 50  # below backports' 100 and bookworm's 500: only what is named `pkg/suite` comes from it
BOOKWORM_GO = "1.19"  # golang-go in bookworm main, already in the image
# Go version -> the Debian suite whose golang-X.Y-go installs on bookworm (measured with apt-cache policy)
GO = {"1.19": "bookworm", "1.21": "bookworm-backports", "1.22": "bookworm-backports",
      "1.23": "bookworm-backports", "1.24": "trixie", "1.25": "trixie-backports", "1.26": "trixie-backports"}  # fmt: skip
# Ubuntu release (and codename) -> the toolchain versions its packages install: {apt package: Go version}
UBUNTU = {"20.04": {"golang-go": "1.13"}, "22.04": {"golang-go": "1.18"}, "24.04": {"golang-go": "1.22"}}
CODENAMES = {"focal": "20.04", "jammy": "22.04", "noble": "24.04"}
JDK = "17"  # bookworm's only JDK: openjdk-17-jdk-headless
GCC = "12"  # bookworm's gcc / g++
NODE = "18"  # bookworm's nodejs
DEBIAN_LIKE = re.compile(r"^(debian|ubuntu|python|buildpack-deps)(-|$)")  # also t-bench's `python-3-13`
MAPS = "only Debian, Ubuntu, python, Go, JDK, GCC and Node images map"


@dataclass
class Base:
    """A FROM image as Debian packages on terminal-coding's image: the steps and ENV that stand in for it."""

    image: str
    kind: str  # debian, go, jdk, gcc, node
    packages: list[str] = field(default_factory=list)  # apt packages, `pkg/suite` where from an added suite
    suite: str = ""  # a suite added (pinned) for them, "" for bookworm main
    setup: list[str] = field(default_factory=list)  # shell commands run after the install
    env: dict[str, str] = field(default_factory=dict)  # ENV the base image sets
    warnings: list[str] = field(default_factory=list)

    def steps(self) -> list[str]:
        """Containerfile lines that install the packages (the suite added and pinned) and set the ENV."""
        if not self.packages and not self.setup and not self.env:
            return []
        out = [f"# ---- ptrain: what FROM {self.image} provides, from Debian ----"]
        run = []
        if self.suite and self.suite != "bookworm":
            run += [f"echo 'deb {MIRROR} {self.suite} main' > /etc/apt/sources.list.d/ptrain-{self.suite}.list",
                    f"printf 'Package: *\\nPin: release n={self.suite}\\nPin-Priority: {PIN_PRIORITY}\\n' "
                    f"> /etc/apt/preferences.d/ptrain-{self.suite}"]  # fmt: skip
        if self.packages:
            run += ["apt-get update",
                    f"DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {' '.join(self.packages)}",
                    "rm -rf /var/lib/apt/lists/*"]  # fmt: skip
        run += self.setup
        if run:
            out.append("RUN " + " \\\n && ".join(run))
        out += [f'ENV {k}="{v}"' for k, v in self.env.items()]
        return out


def parse(image: str) -> tuple[str, str]:
    """`public.ecr.aws/docker/library/golang:1.26.2-bookworm` -> ("golang", "1.26.2-bookworm")."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    name, _, tag = last.partition(":")
    return name.lower(), tag


def map_base(image: str, dockerfile: str = "") -> Base:
    """The Base for a FROM image (`dockerfile` is the text, for what an Ubuntu base's apt lines install);
    ConfigError when it can't be mapped."""
    name, tag = parse(image)
    if m := DEBIAN_LIKE.match(name):
        release = tag if name == "ubuntu" else name[len("ubuntu-") :].replace("-", ".")
        return ubuntu(image, release, dockerfile) if m.group(1) == "ubuntu" else Base(image, "debian")
    if name == "golang":
        return go(image, tag)
    if name in ("eclipse-temurin", "openjdk"):
        return jdk(image, tag)
    if name == "gcc":
        return Base(image, "gcc", warnings=[f"FROM {image}: GCC {version_of(tag) or tag or 'latest'} is bookworm's "
                                            f"gcc/g++ {GCC} (the image's build-essential)"])  # fmt: skip
    if name == "node":
        return Base(image, "node", packages=["nodejs", "npm"],
                    warnings=[f"FROM {image}: Node {version_of(tag) or tag or 'latest'} is bookworm's nodejs {NODE} and npm"])  # fmt: skip
    raise ConfigError(f"base image {image!r} can't be mapped: {MAPS}",
                      fix="the task needs a Dockerfile FROM one of those (terminal-coding's image is Debian bookworm)")  # fmt: skip


def version_of(tag: str) -> str:
    m = re.match(r"\d+(?:\.\d+)*", tag)
    return m.group(0) if m else ""


def go_version(asked: str) -> str:
    """The lowest Go version Debian has for bookworm that is at least `asked` (`1.22.7` -> `1.22`)."""
    key = lambda v: tuple(int(p) for p in v.split("."))  # noqa: E731
    minor = ".".join(asked.split(".")[:2]) if asked else max(GO, key=key)
    fits = [v for v in GO if key(v) >= key(minor)]
    if not fits:
        raise ConfigError(f"Go {asked} is newer than any Debian has for bookworm (up to {max(GO, key=key)})",
                          fix="ask for an older Go, or wait for Debian's backports")  # fmt: skip
    return min(fits, key=key)


def go(image: str, tag: str, official_env: bool = True) -> Base:
    """Debian's golang-X.Y-go for a Go version, its suite pinned, on PATH first, as the golang image sets it."""
    asked = version_of(tag)
    version = go_version(asked)
    suite, root = GO[version], f"/usr/lib/go-{version}"
    pkgs = [f"golang-{version}-go", f"golang-{version}-src"]
    base = Base(image, "go", packages=[f"{p}/{suite}" for p in pkgs] if suite != "bookworm" else pkgs, suite=suite)
    base.env = {"GOPATH": "/go", "GOCACHE": "/tmp/go-build", "PATH": f"/go/bin:{root}/bin:$PATH"}
    base.setup = [f"ln -sfn {root} /usr/local/go", "mkdir -p /go/src /go/bin", "chmod -R 1777 /go"]
    if not official_env:  # an Ubuntu base: only the toolchain first on PATH, GOCACHE writable
        base.env, base.setup = {"GOCACHE": "/tmp/go-build", "PATH": f"{root}/bin:$PATH"}, []
    if ".".join(asked.split(".")[:2]) != version:
        base.warnings.append(f"FROM {image}: Go {asked or 'latest'} is Debian's Go {version} (from {suite}; "
                             "Go is backward compatible)")  # fmt: skip
    return base


def ubuntu(image: str, tag: str, dockerfile: str) -> Base:
    """An Ubuntu base: Debian's image, plus the toolchains its release's packages would have installed
    (UBUNTU) where bookworm's are older."""
    release = CODENAMES.get(tag.split("-")[0], version_of(tag))
    base = Base(image, "debian")
    for package, version in UBUNTU.get(release, {}).items():
        if package == "golang-go" and re.search(r"\bgolang-go\b", dockerfile) and go_version(version) != BOOKWORM_GO:
            toolchain = go(image, version, official_env=False)
            base.packages, base.suite, base.env = toolchain.packages, toolchain.suite, toolchain.env
            base.warnings.append(f"FROM {image}: its golang-go (Go {version}) is Debian's golang-{version}-go "
                                 f"from {toolchain.suite}")  # fmt: skip
    return base


def jdk(image: str, tag: str) -> Base:
    """bookworm's openjdk-17-jdk-headless, JAVA_HOME where temurin puts it."""
    major = version_of(tag).split(".")[0]
    if major and int(major) > int(JDK):
        raise ConfigError(f"base image {image!r} asks for Java {major}; bookworm has only OpenJDK {JDK}",
                          fix="the task needs a JDK 17 (or older) base")  # fmt: skip
    base = Base(image, "jdk", packages=[f"openjdk-{JDK}-jdk-headless"])
    base.setup = ["mkdir -p /opt/java",
                  f"ln -sfn /usr/lib/jvm/java-{JDK}-openjdk-$(dpkg --print-architecture) /opt/java/openjdk"]  # fmt: skip
    base.env = {"JAVA_HOME": "/opt/java/openjdk", "PATH": "/opt/java/openjdk/bin:$PATH"}
    if major != JDK:
        base.warnings.append(f"FROM {image}: Java {major or 'latest'} is Debian's OpenJDK {JDK}")
    return base
