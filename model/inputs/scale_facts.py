"""Published figures for the scale-over-time views: hardware release years (resources/hardware_years.toml) and
the rows of resources/scale_published.toml (retrieval benchmark points, published global batch sizes, the
DeepSeek LLM batch-size law, Gholami et al.'s growth per two years, test-time accuracy rows). Every row carries
its references.toml key and where in the source it was read. A malformed file raises PresetError."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from trinity_desktop.model.inputs.presets import PresetError, _resource_text, read_toml

YEARS_FILE = "hardware_years.toml"
PUBLISHED_FILE = "scale_published.toml"


@dataclass(frozen=True)
class ReleaseYear:
    hardware: str
    year: float
    source: str
    status: str
    note: str


@dataclass(frozen=True)
class RetrievalPoint:
    label: str
    engine: str
    index: str
    vectors: float
    dim: int
    qps: float
    recall: float
    latency_s: float       # 0 where the source gives no latency
    machine: str
    source: str
    where: str


@dataclass(frozen=True)
class PublishedBatch:
    model: str
    year: int
    params: float          # active parameters
    train_tokens: float
    batch_tokens: float
    source: str
    where: str


@dataclass(frozen=True)
class BatchLaw:
    coefficient: float
    exponent: float
    source: str
    where: str


@dataclass(frozen=True)
class GrowthRates:
    """Published growth factor per two years of each hardware quantity."""

    peak_flops: float
    dram_bandwidth: float
    interconnect_bandwidth: float
    source: str
    where: str


@dataclass(frozen=True)
class AccuracyRow:
    model: str
    params: float
    benchmark: str
    samples: int
    accuracy: float
    source: str
    where: str


def _build(cls, entry: dict, where: str):
    names = cls.__dataclass_fields__
    missing = [n for n in names if n not in entry]
    if missing:
        raise PresetError(where, missing[0], "is required")
    unknown = set(entry) - set(names)
    if unknown:
        raise PresetError(where, sorted(unknown)[0], "is not a known key")
    values = {}
    for name, f in names.items():
        raw = entry[name]
        kind = f.type if isinstance(f.type, str) else f.type.__name__
        try:
            values[name] = float(raw) if kind == "float" else int(raw) if kind == "int" else str(raw)
        except (TypeError, ValueError):
            raise PresetError(where, name, f"must be a {kind}, not {raw!r}") from None
    return cls(**values)


@cache
def _published() -> dict:
    return read_toml(PUBLISHED_FILE, _resource_text(PUBLISHED_FILE))


@cache
def release_years() -> dict[str, ReleaseYear]:
    """{hardware preset key: ReleaseYear}."""
    doc = read_toml(YEARS_FILE, _resource_text(YEARS_FILE))
    out = {}
    for key, entry in doc.get("years", {}).items():
        out[key] = _build(ReleaseYear, {"hardware": key, **entry}, f"{YEARS_FILE} [{key}]")
    return out


def _rows(table: str, cls) -> tuple:
    return tuple(_build(cls, entry, f"{PUBLISHED_FILE} [[{table}]] #{i + 1}")
                 for i, entry in enumerate(_published().get(table, [])))


@cache
def retrieval_points() -> tuple[RetrievalPoint, ...]:
    return _rows("retrieval_point", RetrievalPoint)


@cache
def published_batches() -> tuple[PublishedBatch, ...]:
    return _rows("batch", PublishedBatch)


@cache
def accuracy_rows() -> tuple[AccuracyRow, ...]:
    return _rows("test_time", AccuracyRow)


@cache
def batch_law() -> BatchLaw:
    return _build(BatchLaw, _published().get("batch_law", {}), f"{PUBLISHED_FILE} [batch_law]")


@cache
def growth_rates() -> GrowthRates:
    return _build(GrowthRates, _published().get("growth_per_2y", {}), f"{PUBLISHED_FILE} [growth_per_2y]")


@cache
def model_year_sources() -> dict[str, str]:
    """{model preset key: references.toml key whose year dates the model}."""
    return {str(k): str(v) for k, v in _published().get("model_years", {}).items()}
