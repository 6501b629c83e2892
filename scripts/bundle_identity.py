"""Export each method family's demo bundle at one knob and seed and record every file's SHA-256, so that a change
meant to leave behaviour alone can be checked byte for byte against the bundles of the commit before it.

    python scripts/bundle_identity.py --out before.json            # on the commit before the change
    python scripts/bundle_identity.py --out after.json --against before.json

The manifest is compared without its ``manifest_version`` (added by the release record) and without the ``files``
checksums of files the comparison already covers one by one; the run uses one cache folder (``--cache``), since
the pseudonymization key lives in the cache, and one audit log per bundle. Exit status 1 names every difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("redact", "airline-tweets", ("--knob", "2")),
    ("redact-frontier", "airline-tweets", ("--knob", "3", "--with-frontier")),
    ("glm", "airline-tweets", ()),
    ("cart", "airline-tweets", ()),
    ("count-bayes", "nyc-airbnb", ()),
    ("md", "airline-tweets", ()),
    ("rnn", "airline-tweets", ()),
    ("swap", "earnings-calls", ()),
    ("kanon", "twitter-profiles", ("--knob", "5")),
)
IGNORED_MANIFEST_KEYS = ("manifest_version", "engine_code")  # the digest of the code differs by commit


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest_digest(path: Path) -> str:
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for key in IGNORED_MANIFEST_KEYS:
        manifest.pop(key, None)
    text = json.dumps(manifest, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def export(case: str, data: str, extra: tuple[str, ...], out: Path, cache: Path) -> dict[str, str]:
    method = case.split("-frontier")[0]
    env = {**os.environ, "TEXTSDC_CACHE_DIR": str(cache)}
    args = [sys.executable, "-m", "engine.cli", "release", "--data", data, "--method", method, "--seed", "0"]
    args += ["--replicates", "2", *extra, "--out", str(out), "--audit-log", str(out.parent / f"{case}.sqlite")]
    shutil.rmtree(out, ignore_errors=True)  # an earlier run's bundle: `release` replaces one only when told
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{case}: {' '.join(args)} failed:\n{done.stderr}")
    files = {p.name: _sha(p) for p in sorted(out.iterdir()) if p.name != "manifest.json"}
    files["manifest.json (without manifest_version)"] = _manifest_digest(out / "manifest.json")
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--against", type=Path, help="a JSON this script wrote on the commit before")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "textsdc-bundle-identity-cache")
    parser.add_argument("--only", help="cases separated by commas")
    parser.add_argument(
        "--bundles",
        type=Path,
        default=Path(tempfile.gettempdir()) / "textsdc-bundle-identity",
        help="where the bundles are written (the same folder on both commits: the replay command names it)",
    )
    a = parser.parse_args()
    cases = [c for c in CASES if not a.only or c[0] in a.only.split(",")]
    result: dict[str, dict[str, str]] = {}
    a.bundles.mkdir(parents=True, exist_ok=True)
    for case, data, extra in cases:
        print(f"{case} on {data} …", file=sys.stderr, flush=True)
        result[case] = export(case, data, extra, a.bundles / case, a.cache)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    a.out.write_text(json.dumps({"commit": commit, "bundles": result}, indent=2) + "\n", encoding="utf-8")
    if a.against is None:
        return 0
    before = json.loads(a.against.read_text(encoding="utf-8"))["bundles"]
    differences = [
        f"{case}/{name}: {'missing' if name not in result.get(case, {}) else 'other bytes'}"
        for case, files in before.items()
        if case in result
        for name, digest in files.items()
        if result[case].get(name) != digest
    ]
    differences += [
        f"{case}/{name}: new file" for case in result for name in result[case] if name not in before.get(case, {})
    ]
    print("\n".join(differences) or "every bundle file is byte-identical", file=sys.stderr)
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
