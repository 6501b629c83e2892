"""Numeric features of text: the word counts a synthesizer conditions on, and the stylometric features an
intruder matches writing style with (Schneider, Hu, Mankad & Bale, 2023, Section 5.1).

Two feature sets, as the paper keeps them apart:

- `synthesis_counts`: word counts after lower-casing and removing numbers, punctuation, white space and
  user-given vendor keywords (the "term normalization" of Section 5.1). Used by the synthesizers and the
  utility measures.
- `stylometric_features`: the full set used to measure disclosure risk, where case, digits and punctuation are
  kept because they are predictive of authorship: raw word frequencies, the 13 punctuation marks
  ``! . ? # @ $ % & , ; : ( )``, frequencies of function words, letters a–z (ignoring case), digits 0–9, the
  number of words, the number of words mixing upper- and lower-case letters, the number of words of each
  length 1–30, Yule's K and the Flesch–Kincaid grade level.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer

PUNCTUATION_MARKS: tuple[str, ...] = ("!", ".", "?", "#", "@", "$", "%", "&", ",", ";", ":", "(", ")")

# English function words: articles, pronouns, prepositions, conjunctions, auxiliary and modal verbs,
# quantifiers and common adverbs of degree — words chosen by habit rather than by topic.
FUNCTION_WORDS: tuple[str, ...] = tuple(
    sorted(
        set(
            """
a about above across after afterwards again against all almost alone along already also although always am
among amongst an and another any anybody anyone anything anywhere are around as at be became because been
before beforehand behind being below beside besides between beyond both but by can cannot could did do does
doing done down during each either else enough even ever every everybody everyone everything except few for
former formerly from further had has have having he her here hers herself him himself his how however i if in
indeed inside instead into is it its itself just least less like many may me might mine more moreover most
mostly much must my myself near neither never nevertheless next no nobody none noone nor not nothing now
of off often on once one only onto or other others otherwise our ours ourselves out outside over own per
perhaps quite rather same several shall she should since so some somebody someone something sometimes
somewhat still such than that the their theirs them themselves then there thereafter therefore these they
this those though through throughout thus till to together too toward towards under unless until up upon us
very via was we well were what whatever when whenever where whereas wherever whether which while who whoever
whole whom whose why will with within without would yet you your yours yourself yourselves
""".split()
        )
    )
)

MAX_WORD_LENGTH = 30
_NORMALIZE_DROP = re.compile(r"[0-9]+|[^\w\s]|_", re.UNICODE)
_APOSTROPHES = re.compile(r"['’]")
_WORD = re.compile(r"[A-Za-z]+")
_VOWEL_GROUPS = re.compile(r"[aeiouy]+")
_SENTENCE_END = re.compile(r"[.!?]+")


# ---------------------------------------------------------------------------------------------------------------
# Word counts for synthesis (Section 5.1, term normalization)


def normalize_for_synthesis(text: str, vendor_keywords: frozenset[str] = frozenset()) -> list[str]:
    """Lower-cased words with numbers, punctuation and white space removed and vendor keywords dropped.

    Apostrophes are removed inside words ("don't" → "dont"); every other punctuation mark separates words.
    """
    lowered = _APOSTROPHES.sub("", str(text).lower())
    words = _NORMALIZE_DROP.sub(" ", lowered).split()
    return [w for w in words if w not in vendor_keywords]


@dataclass
class WordCounts:
    """A documents × words count matrix and the vocabulary it was built with."""

    matrix: sparse.csr_matrix
    vocabulary: np.ndarray
    vendor_keywords: tuple[str, ...] = ()

    def transform(self, texts: Iterable[str]) -> sparse.csr_matrix:
        """Counts of this vocabulary in other texts (words outside it are ignored)."""
        vec = CountVectorizer(
            analyzer=lambda t: normalize_for_synthesis(t, frozenset(self.vendor_keywords)),
            vocabulary={w: i for i, w in enumerate(self.vocabulary)},
        )
        return vec.transform(list(texts)).astype(np.float64).tocsr()


def synthesis_counts(texts: Sequence[str], vendor_keywords: Iterable[str] = (), min_df: int = 1) -> WordCounts:
    """Word counts of ``texts`` after the term normalization of Schneider et al. (2023), Section 5.1.

    ``vendor_keywords`` are normalized the same way and every word of them is removed (e.g. "Virgin America"
    removes "virgin" and "america"); ``min_df`` drops words found in fewer documents. Every text may be empty; the vocabulary may not.
    """
    keywords = tuple(sorted({w for k in vendor_keywords for w in normalize_for_synthesis(k)}))
    vec = CountVectorizer(analyzer=lambda t: normalize_for_synthesis(t, frozenset(keywords)), min_df=min_df)
    try:
        matrix = vec.fit_transform(list(texts))
    except ValueError:  # no word at all survives normalization
        return WordCounts(sparse.csr_matrix((len(texts), 0)), np.array([], dtype=object), keywords)
    return WordCounts(matrix.astype(np.float64).tocsr(), vec.get_feature_names_out(), keywords)


# ---------------------------------------------------------------------------------------------------------------
# Stylometric features for disclosure risk (Section 5.1)


def count_syllables(word: str) -> int:
    """Syllables of an English word by the vowel-group rule: groups of vowels, a silent final e dropped, at least 1."""
    w = word.lower()
    groups = len(_VOWEL_GROUPS.findall(w))
    if w.endswith("e") and not w.endswith(("le", "ee", "ye")) and groups > 1:
        groups -= 1
    return max(groups, 1)


def style_feature_names() -> list[str]:
    """Names of the non-vocabulary stylometric features, in column order."""
    names = [f"punct:{p}" for p in PUNCTUATION_MARKS]
    names += [f"function:{w}" for w in FUNCTION_WORDS]
    names += [f"letter:{c}" for c in "abcdefghijklmnopqrstuvwxyz"]
    names += [f"digit:{d}" for d in "0123456789"]
    names += ["words", "mixed_case_words"]
    names += [f"word_length:{i}" for i in range(1, MAX_WORD_LENGTH + 1)]
    names += ["yules_k", "flesch_kincaid_grade"]
    return names


def style_vector(text: str) -> np.ndarray:
    """The non-vocabulary stylometric features of one text (see `style_feature_names`)."""
    return style_block([text])[0]


_ASCII = 128
_PUNCT_CODES = np.array([ord(p) for p in PUNCTUATION_MARKS])
_LETTER_CODES = np.arange(ord("a"), ord("z") + 1)
_DIGIT_CODES = np.arange(ord("0"), ord("9") + 1)


def _ascii_counts(texts: Sequence[str]) -> np.ndarray:
    """texts × 128: how often each ASCII character occurs in each text (as `str.count` counts it)."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    # One code point per character (lone surrogates from a lenient decoding included), as `len` counts them.
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    ascii_ = codes < _ASCII
    flat = np.bincount(owner[ascii_] * _ASCII + codes[ascii_], minlength=len(texts) * _ASCII)
    return flat.reshape(len(texts), _ASCII).astype(np.float64)


def style_block(texts: Sequence[str]) -> np.ndarray:
    """texts × the non-vocabulary stylometric features (`style_feature_names`), for many texts at once: the
    characters counted from one array of code points, the words (runs of ASCII letters) once for all texts.

    Per text, with w its words: counts of the 13 punctuation marks and the digits in the text, of the letters
    a–z in the lower-cased text, of each function word among w lower-cased; the white-space separated tokens;
    the words of w mixing upper- and lower-case letters; the words of w of each length 1–30; Yule's
    characteristic K = 10⁴ · (Σᵢ i²·Vᵢ − N) / N² of w lower-cased (Vᵢ word types used i times, N = |w|; 0 when
    N < 2); and the Flesch–Kincaid grade (Kincaid et al., 1975) 0.39·N/sentences + 11.8·syllables/N − 15.59
    (syllables by `count_syllables`; sentences end at . ! or ?, at least one; 0 when N = 0)."""
    texts = [str(t) for t in texts]
    n = len(texts)
    if n == 0:
        return np.zeros((0, len(style_feature_names())))
    chars = _ascii_counts(texts)
    lowered = _ascii_counts([t.lower() for t in texts])
    # Texts × words as written: each distinct word a column, in order of first use.
    columns: dict[str, int] = {}
    indices: list[int] = []
    indptr = [0]
    for t in texts:
        indices += [columns.setdefault(w, len(columns)) for w in _WORD.findall(t)]
        indptr.append(len(indices))
    C = sparse.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(n, len(columns)))
    C.sum_duplicates()
    vocabulary = list(columns)
    # Each word as written → its lower-cased form (Yule's K and the function words count those).
    forms: dict[str, int] = {}
    form_of = np.array([forms.setdefault(w.lower(), len(forms)) for w in vocabulary], dtype=np.int64)
    P = sparse.csr_matrix(
        (np.ones(len(vocabulary)), (np.arange(len(vocabulary)), form_of)), (len(vocabulary), len(forms))
    )
    C_low = (C @ P).tocsr()
    found = [(forms[w], k) for k, w in enumerate(FUNCTION_WORDS) if w in forms]
    F = sparse.csr_matrix(
        (np.ones(len(found)), ([f for f, _ in found], [k for _, k in found])), (len(forms), len(FUNCTION_WORDS))
    )
    function = (C_low @ F).toarray()
    word_length = np.array([len(w) for w in vocabulary], dtype=np.int64)
    keep = word_length <= MAX_WORD_LENGTH
    L = sparse.csr_matrix(
        (np.ones(int(keep.sum())), (np.flatnonzero(keep), word_length[keep] - 1)), (len(vocabulary), MAX_WORD_LENGTH)
    )
    mixed = np.array([not w.isupper() and not w.islower() for w in vocabulary], dtype=np.float64)
    syllables = np.array([count_syllables(w) for w in vocabulary], dtype=np.float64)
    n_words = np.asarray(C.sum(axis=1)).ravel()
    squares = np.asarray(C_low.multiply(C_low).sum(axis=1)).ravel()
    sentences = np.array([max(sum(1 for s in _SENTENCE_END.split(t) if s.strip()), 1) for t in texts], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        yule = np.where(n_words >= 2, 1e4 * (squares - n_words) / (n_words * n_words), 0.0)
        grade = np.where(n_words > 0, 0.39 * n_words / sentences + 11.8 * (C @ syllables) / n_words - 15.59, 0.0)
    return np.column_stack(
        [
            chars[:, _PUNCT_CODES],
            function,
            lowered[:, _LETTER_CODES],
            chars[:, _DIGIT_CODES],
            np.array([len(t.split()) for t in texts], dtype=np.float64),
            C @ mixed,
            (C @ L).toarray(),
            yule,
            grade,
        ]
    )


@dataclass
class StyleFeatures:
    """Stylometric features of a set of texts: raw word counts (sparse) beside the dense style block."""

    words: sparse.csr_matrix
    style: np.ndarray

    @property
    def n_features(self) -> int:
        return self.words.shape[1] + self.style.shape[1]


def style_words(vocabulary_texts: Sequence[str]) -> CountVectorizer | None:
    """The word counter of `stylometric_features` fitted on ``vocabulary_texts`` (None when they hold no
    word): fit it once and pass it to count the words of many sets of texts on one vocabulary."""
    vec = CountVectorizer(analyzer=str.split, lowercase=False)
    try:
        return vec.fit(list(vocabulary_texts))
    except ValueError:
        return None


def stylometric_features(
    texts: Sequence[str], vocabulary_texts: Sequence[str] | CountVectorizer | None = None
) -> StyleFeatures:
    """Section 5.1's full feature set for ``texts``; the word vocabulary comes from ``vocabulary_texts``
    (default: the texts themselves), or is a counter `style_words` fitted before. Words are white-space
    separated tokens kept as written (case, digits and punctuation included), because for risk "these items
    ... can be predictive of authorship".
    """
    if isinstance(vocabulary_texts, CountVectorizer):
        vec: CountVectorizer | None = vocabulary_texts
    else:
        vec = style_words(list(vocabulary_texts) if vocabulary_texts is not None else list(texts))
    if len(texts) <= FEATURE_CHUNK:
        return _features(texts, vec)
    parts = [_features(texts[k : k + FEATURE_CHUNK], vec) for k in range(0, len(texts), FEATURE_CHUNK)]
    return StyleFeatures(sparse.vstack([p.words for p in parts], format="csr"), np.vstack([p.style for p in parts]))


FEATURE_CHUNK = 20_000
"""Texts whose features `stylometric_features` counts at once: every feature is a text's own count of whole
things (or a ratio of such counts), so the rows are the same whatever the chunk. At once, the changed texts of
200,000 redacted posts took 640 MB beside the 245 MB of their features."""


def _features(texts: Sequence[str], vec: CountVectorizer | None) -> StyleFeatures:
    if vec is None:
        words = sparse.csr_matrix((len(texts), 0))
    else:
        words = vec.transform([str(t) for t in texts]).astype(np.float64).tocsr()
    return StyleFeatures(words, style_block(texts))
