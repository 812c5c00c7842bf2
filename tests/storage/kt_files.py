"""Small Kernel Tuner caches and T4 files written by the tests themselves."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

TUNE_PARAMS = {
    "block_size_x": [32, 64, 128, 256],
    "tile-size": [1, 2, 3],  # not a Python identifier
    "use_shared": [True, False],
    "variant": ["a", "b"],
    "filter_width": [15],  # a constant
}
MARKERS = {0: "CompilationFailedConfig", 1: "RuntimeFailedConfig", 2: "InvalidConfig"}


def small_cache() -> dict[str, Any]:
    """A cache of the rows with ``block_size_x * tile-size <= 512`` (the others absent);
    every 7th row fails (compile, runtime, invalid in turn), one has an old sentinel."""
    keys = list(TUNE_PARAMS)
    cache, failed = {}, 0
    for i, values in enumerate(itertools.product(*TUNE_PARAMS.values())):
        record = dict(zip(keys, values, strict=True))
        if record["block_size_x"] * record["tile-size"] > 512:
            continue
        time = 1.0 + abs(record["block_size_x"] - 128) / 64 + record["tile-size"] / 10
        time += 0.05 * record["use_shared"] + (0.3 if record["variant"] == "b" else 0.0)
        if i % 7 == 3:
            record["time"] = MARKERS[failed % 3]
            failed += 1
        elif i == 5:
            record["time"] = 1e20
        else:
            record.update(time=time, times=[time * 0.99, time * 1.01], **{"GFLOP/s": 100 / time})
        record.update(compile_time=0.5, strategy_time=0)
        cache[",".join(str(v) for v in values)] = record
    return {
        "device_name": "Test GPU",
        "kernel_name": "test_kernel",
        "problem_size": [1024],
        "tune_params_keys": keys,
        "tune_params": TUNE_PARAMS,
        "objective": "time",
        "cache": cache,
    }


def cache_counts(document: dict[str, Any]) -> dict[str, int]:
    """Rows, failed rows (a marker or a sentinel instead of a time) and raw size."""
    times = [r["time"] for r in document["cache"].values()]
    failed = sum(isinstance(t, str) or t >= 1e20 for t in times)
    raw = 1
    for levels in document["tune_params"].values():
        raw *= len(levels)
    return {"rows": len(times), "failed": failed, "raw": raw}


def as_t4(document: dict[str, Any]) -> dict[str, Any]:
    """The cache as a T4 results file, the way Kernel Tuner's ``get_t4_results`` writes it."""
    results = []
    word = {"CompilationFailedConfig": "compile", "RuntimeFailedConfig": "runtime"}
    for record in document["cache"].values():
        time = record["time"]
        invalidity = word.get(time, "constraints") if isinstance(time, str) else "correct"
        results.append(
            {
                "configuration": {k: record[k] for k in document["tune_params"]},
                "times": {"compilation": 0.5, "runtimes": record.get("times", [])},
                "invalidity": invalidity,
                "correctness": 1,
                "measurements": [{"name": "time", "value": time, "unit": "ms"}],
                "objectives": ["time"],
            }
        )
    return {"schema_version": "1.0.0", "results": results, "metadata": {"timeunit": "ms"}}


def write_json(path: Path, document: Any, gz: bool = False) -> Path:
    text = json.dumps(document)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path
