"""The multinomial lasso path: optimality (KKT) along the path, λmax exactly, weights, interpolation."""

import numpy as np
import pytest
from scipy import sparse

from engine.errors import DataError
from engine.protect.field_synthesis import lasso
from engine.protect.field_synthesis.lasso import fit_lasso_path, lambda_max, objective, softmax, standardize_columns


def problem(n=240, p=120, K=4, seed=0):
    """Sparse counts where a few words carry the class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    X = rng.poisson(0.15, (n, p)).astype(float)
    for k in range(K):
        X[y == k, k] += rng.poisson(1.5, (y == k).sum())
    return sparse.csr_matrix(X), y, K


def kkt_residual(X, y, K, path, l, w=None):
    """Largest violation of the lasso optimality conditions at path point l, relative to λmax."""
    n = X.shape[0]
    w = np.full(n, 1.0 / n) if w is None else w / w.sum()
    lam = path.lambdas[l]
    P = softmax(path.linear_predictor(X, lam))
    Y = np.eye(K)[y]
    R = w[:, None] * (P - Y)
    center, scale, varies = standardize_columns(X, w)
    Xs = (X.toarray() - center) / scale
    G = Xs[:, varies].T @ R
    B = path.coef[l].toarray().reshape(-1, K)[varies]
    zero = B == 0
    v_zero = np.maximum(np.abs(G[zero]) - lam, 0).max(initial=0)
    v_active = np.abs(G[~zero] + lam * np.sign(B[~zero])).max(initial=0)
    v_intercept = np.abs(R.sum(axis=0)).max()
    return max(v_zero, v_active, v_intercept) / path.lambdas[0]


def test_kkt_conditions_hold_along_the_path():
    X, y, K = problem()
    path = fit_lasso_path(X, y, K, n_lambda=30, tol=1e-7)
    for l in (0, 5, 15, 29):
        assert kkt_residual(X, y, K, path, l) < 1e-5, l


def test_lambda_max_is_the_smallest_lambda_with_all_coefficients_zero():
    X, y, K = problem(seed=1)
    top = lambda_max(X, y, K)
    path = fit_lasso_path(X, y, K, lambdas=np.array([top * 1.0001, top * 0.98]), tol=1e-8)
    assert path.coef[0].nnz == 0
    assert path.coef[1].nnz > 0
    assert path.lambda_max == pytest.approx(top * 1.0001)
    # The intercept-only model predicts the class shares for everyone.
    P = path.predict_proba(X, top * 1.0001)
    assert np.allclose(P, np.bincount(y, minlength=K) / len(y))


def test_default_path_runs_from_lambda_max_down_to_a_thousandth():
    X, y, K = problem(seed=2)
    path = fit_lasso_path(X, y, K, n_lambda=100)
    assert len(path.lambdas) == 100
    assert path.lambdas[0] == pytest.approx(lambda_max(X, y, K))
    assert path.lambdas[-1] == pytest.approx(1e-3 * path.lambdas[0])
    assert np.allclose(np.diff(np.log(path.lambdas)), np.log(1e-3) / 99)
    nz = path.nonzero_counts()
    assert nz[0] == 0 and nz[-1] > nz[len(nz) // 2] > 0
    # The objective decreases as λ falls (a smaller penalty can only fit better).
    obj = [objective(X, y, path, l) for l in range(0, 100, 10)]
    assert all(a >= b - 1e-9 for a, b in zip(obj, obj[1:]))


def test_a_weight_of_two_equals_a_duplicated_record():
    X, y, K = problem(n=150, seed=3)
    w = np.ones(X.shape[0])
    w[:20] = 2.0
    dup = sparse.vstack([X, X[:20]]).tocsr()
    ydup = np.concatenate([y, y[:20]])
    lambdas = fit_lasso_path(dup, ydup, K, n_lambda=10).lambdas
    a = fit_lasso_path(X, y, K, lambdas=lambdas, sample_weight=w, tol=1e-8)
    b = fit_lasso_path(dup, ydup, K, lambdas=lambdas, tol=1e-8)
    assert np.allclose(a.predict_proba(X, lambdas[6]), b.predict_proba(X, lambdas[6]), atol=1e-5)


def test_between_path_points_coefficients_are_interpolated_linearly_in_lambda():
    X, y, K = problem(seed=4)
    path = fit_lasso_path(X, y, K, n_lambda=20)
    l = 8
    mid = 0.5 * (path.lambdas[l] + path.lambdas[l + 1])
    B, b = path.coefficients(mid)
    B0, b0 = path.coefficients(path.lambdas[l])
    B1, b1 = path.coefficients(path.lambdas[l + 1])
    assert np.allclose(B.toarray(), 0.5 * (B0.toarray() + B1.toarray()))
    assert np.allclose(b, 0.5 * (b0 + b1))
    with pytest.raises(ValueError, match="below the end of the fitted path"):
        path.coefficients(path.lambdas[-1] / 2)


def test_bad_labels_are_refused():
    X, y, K = problem(n=50)
    with pytest.raises(DataError, match="class codes must lie in 0..3"):
        fit_lasso_path(X, np.full(50, 7), K)
    with pytest.raises(DataError, match="rows but there are"):
        fit_lasso_path(X, y[:10], K)


def test_row_blocks_on_threads_and_both_working_set_layouts_solve_the_same_problem(monkeypatch):
    """Several row blocks on a thread pool, with the working set as its own sub-matrix or as the whole
    design: the optimality conditions hold along the path and the fits agree with one block on one thread."""
    X, y, K = problem(n=600, p=150, seed=5)
    single = fit_lasso_path(X, y, K, n_lambda=25, tol=1e-7, n_threads=1)
    monkeypatch.setattr(lasso, "MIN_BLOCK_NNZ", 500)  # a small design cut into three blocks
    for whole_share in (0.0, 2.0):  # always the whole design; always a sub-matrix
        monkeypatch.setattr(lasso, "WHOLE_SHARE", whole_share)
        path = fit_lasso_path(X, y, K, lambdas=single.lambdas, tol=1e-7, n_threads=3)
        for l in (3, 12, 24):
            assert kkt_residual(X, y, K, path, l) < 1e-5, (whole_share, l)
        for lam in single.lambdas[[6, 24]]:
            assert np.allclose(path.predict_proba(X, lam), single.predict_proba(X, lam), atol=1e-4)


def test_the_loss_stays_exact_where_exp_would_overflow_or_underflow():
    eta = np.array([[800.0, 790.0, 0.0], [-800.0, -805.0, -900.0], [1.0, 2.0, 3.0]])
    y = np.array([1, 0, 2])
    w = np.array([0.2, 0.3, 0.5])
    loss, R = lasso._block_loss(eta, lasso._Rows(w, y, 3), residual=True)
    top = eta.max(axis=1)
    lse = top + np.log(np.exp(eta - top[:, None]).sum(axis=1))
    assert loss == pytest.approx(float(w @ (lse - eta[np.arange(3), y])), rel=1e-12)
    assert np.allclose(R, w[:, None] * (softmax(eta) - np.eye(3)[y]), atol=1e-15)
