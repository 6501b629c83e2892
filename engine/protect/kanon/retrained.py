"""The privacy-attribute tagger retrained on a steward's annotations (issue 51; trained and cross-validated in
`engine.annotation.retrain`), kept per dataset (its fingerprint) in the cache folder beside the annotations, only
when the steward chooses to keep it, never in a bundle: the model holds weights learnt from the steward's
confidential records (a name it saw is a feature with a weight).

The `kanon` method runs with it when its parameter ``tagger`` is "retrained"; the release then records how many
annotated records it was trained on and the model's digest (`RetrainedTagger`), and a replay where the model is
not kept refuses with a message saying so (`tagger_in_use`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from engine.atomic import atomic_write_bytes
from engine.errors import ConfigError, DataError
from engine.paths import cache_dir
from engine.protect.base import ReleaseDetail
from engine.protect.corrections import ANNOTATIONS_FOLDER

if TYPE_CHECKING:
    from engine.protect.kanon.tagger import PrivacyTagger

PACKAGED, RETRAINED = "packaged", "retrained"
CHOICES = (PACKAGED, RETRAINED)
"""The values of the kanon parameter ``tagger``: the tagger shipped with the gold set, or the one retrained on
the steward's annotations of this dataset and kept."""


@dataclass(frozen=True)
class RetrainedTagger(ReleaseDetail):
    """What a release records of the retrained tagger it ran with (the manifest's ``retrained_tagger``, the
    report's facts): how many annotated records it was trained on beside the gold set, and the model's digest."""

    records: int
    digest: str
    section: ClassVar[str] = "facts"
    block: ClassVar[str] = "caption"

    def facts(self) -> tuple[tuple[str, str], ...]:
        said = (
            f"retrained on the gold set and {self.records:,} steward-annotated record"
            f"{'s' if self.records != 1 else ''} of this dataset (model digest {self.digest[:12]}; kept on the "
            "steward's machine, not in this bundle)"
        )
        return (("Privacy-attribute tagger", said),)

    def to_dict(self) -> dict[str, Any]:
        return {"records": self.records, "digest": self.digest}

    @classmethod
    def from_dict(cls, entry: dict[str, Any]) -> RetrainedTagger:
        return cls(int(entry["records"]), str(entry["digest"]))


def model_path(fingerprint: str) -> Path:
    """The file of the retrained tagger kept for the dataset with ``fingerprint``."""
    return cache_dir() / ANNOTATIONS_FOLDER / f"{fingerprint[:32]}-kanon-tagger.crf"


def _meta_path(fingerprint: str) -> Path:
    return model_path(fingerprint).with_suffix(".json")


def keep_retrained(fingerprint: str, model: bytes, records: int) -> RetrainedTagger:
    """Keep ``model`` (a CRF's bytes, trained on the gold set and ``records`` annotated records) for the dataset
    with ``fingerprint``, readable by the steward's account only, replacing the kept one."""
    path = model_path(fingerprint)
    path.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(model).hexdigest()
    atomic_write_bytes(path, model, private=True)
    meta = {"fingerprint": fingerprint, "records": records, "sha256": digest}
    atomic_write_bytes(_meta_path(fingerprint), json.dumps(meta, indent=1).encode("utf-8"), private=True)
    return RetrainedTagger(records, digest)


def kept_retrained(fingerprint: str) -> tuple[PrivacyTagger, RetrainedTagger] | None:
    """The retrained tagger kept for the dataset with ``fingerprint`` and what a release records of it; None when
    none is kept. DataError when the model does not match what was kept."""
    path, meta_path = model_path(fingerprint), _meta_path(fingerprint)
    if not (path.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta["fingerprint"] != fingerprint:
            raise KeyError("fingerprint")
        records, digest = int(meta["records"]), str(meta["sha256"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise DataError(f"the retrained tagger's file {meta_path} is damaged; delete it and retrain") from None
    if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
        raise DataError(f"the retrained tagger {path} is not the model that was kept; delete it and retrain")
    from engine.protect.kanon.tagger import PrivacyTagger

    return PrivacyTagger(path), RetrainedTagger(records, digest)


def drop_retrained(fingerprint: str) -> None:
    model_path(fingerprint).unlink(missing_ok=True)
    _meta_path(fingerprint).unlink(missing_ok=True)


def tagger_in_use(fingerprint: str, choice: str) -> tuple[PrivacyTagger, RetrainedTagger | None]:
    """The tagger a kanon release with ``tagger = choice`` runs with on the dataset with ``fingerprint``, and what
    it records of it: the packaged one for "packaged"; for "retrained" the one kept, and a ConfigError when none
    is kept on this machine (a replay away from the steward's cache)."""
    if choice not in CHOICES:
        raise ConfigError(f"tagger = {choice!r} is not accepted; accepted: {', '.join(CHOICES)}")
    if choice == PACKAGED:
        from engine.protect.kanon.tagger import default_tagger

        return default_tagger(), None
    kept = kept_retrained(fingerprint)
    if kept is None:
        raise ConfigError(
            "tagger = retrained, but no retrained tagger is kept for this dataset on this machine (it stays in the "
            "steward's cache folder and no bundle holds it): retrain and keep it on the Protect page's annotation "
            'panel ("Use the retrained tagger"), replay on the steward\'s machine, or set tagger = packaged'
        )
    return kept
