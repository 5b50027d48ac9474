"""How big the container image is and how long it takes to build.

    python bench/container_image.py [--python-image TAG] [--tag brudno:bench] [--no-cache]

Builds the project's Dockerfile with the real Docker daemon on ``--python-image`` (by default
the base ``docker/make-base-image python`` makes from Debian's packages, made first when it
is missing, and timed then) and prints one ``key=value`` line per image::

    base=brudno-base/python:3.11-bookworm size_mb=223 build_s=66
    image=brudno:bench size_mb=423 build_s=258 cached=no base_share_mb=223

``size_mb`` is Docker's size of the image (all its layers, in 10^6 bytes), ``build_s`` the
wall time of the build, ``base_share_mb`` the part of the image that is its base.  The build
compiles the engine's hot modules with mypyc, which dominates the time: expect minutes on two
cores, and more on a machine busy with other work.  ``.ci/run`` prints the same figures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BASE = "brudno-base/python:3.11-bookworm"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
MB = 1_000_000


def size_mb(image: str) -> int:
    out = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Size}}", image],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return int(out) // MB


def exists(image: str) -> bool:
    found = subprocess.run(
        ["docker", "image", "inspect", image], capture_output=True, check=False
    ).returncode
    return found == 0


def make_base(tag: str) -> None:
    extra = ["--ca-bundle", str(CA_BUNDLE)] if CA_BUNDLE.is_file() else []
    started = time.monotonic()
    subprocess.run([str(REPO / "docker" / "make-base-image"), "python", "--tag", tag, *extra],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    print(f"base={tag} size_mb={size_mb(tag)} build_s={time.monotonic() - started:.0f}")


def build(base: str, tag: str, *, no_cache: bool) -> None:
    command = ["docker", "build", "-q", "--build-arg", f"PYTHON_IMAGE={base}", "-t", tag, "."]
    if no_cache:
        command.insert(2, "--no-cache")
    started = time.monotonic()
    subprocess.run(
        command,
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "DOCKER_BUILDKIT": "0"},  # Debian's docker.io has no buildx
    )
    seconds = time.monotonic() - started
    print(
        f"image={tag} size_mb={size_mb(tag)} build_s={seconds:.0f} "
        f"cached={'no' if no_cache else 'allowed'} base_share_mb={size_mb(base)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python-image", help=f"base image (default: {DEFAULT_BASE}, made)")
    parser.add_argument("--tag", default="brudno:bench", help="the image to build")
    parser.add_argument("--no-cache", action="store_true", help="build every layer afresh")
    args = parser.parse_args()
    base = args.python_image or DEFAULT_BASE
    if args.python_image is None and not exists(base):
        make_base(base)
    build(base, args.tag, no_cache=args.no_cache)


if __name__ == "__main__":
    main()
