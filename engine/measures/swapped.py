"""What the measures of the named-entity swap (`engine.protect.swap`) read: the fit's prepared chunks, and per
release which chunks were swapped and their released text (`SwapDetail`, kept out of the bundle)."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.measures.base import NotApplicable, PrepareContext, ReleaseView
from engine.protect.swap.method import FittedSwap, SwapDetail

METHOD = "swap"


def fitted_swap(context: PrepareContext) -> FittedSwap:
    """The swap's fit the measures are prepared for (NotApplicable for any other method)."""
    fitted: Any = context.fitted
    if fitted is None or getattr(fitted, "method", None) != METHOD:
        raise NotApplicable("measures releases of the named-entity swap only")
    return fitted


def swap_detail(view: ReleaseView) -> SwapDetail | None:
    """The release's `SwapDetail`; None for the unprotected data (nothing swapped)."""
    return view.detail(SwapDetail)


def released_chunks(fitted: FittedSwap, view: ReleaseView) -> list[str]:
    """Every chunk's text in the release: rewritten where the release moved it, else as in D_pre (the chunks with
    direct identifiers and the C categories suppressed); for the unprotected data, the original chunks."""
    detail = swap_detail(view)
    if detail is None:
        return original_chunks(fitted, view)
    return [detail.moved.get(k, text) for k, text in enumerate(fitted.prepared.reference)]


def original_chunks(fitted: FittedSwap, view: ReleaseView) -> list[str]:
    """The chunks as the data holds them (before anything was suppressed)."""
    texts = view.data[fitted.text_column].astype(str).tolist()
    return [texts[r][s:e] for r, s, e in fitted.spans[["record", "start", "end"]].itertuples(index=False)]


def swapped_flags(fitted: FittedSwap, view: ReleaseView) -> np.ndarray:
    detail = swap_detail(view)
    n = len(fitted.prepared.reference)
    return np.zeros(n, dtype=bool) if detail is None else np.asarray(detail.swapped, dtype=bool)
