"""Queueing formulas of a serving replica under Poisson arrivals: the M/D/1 waiting time, its quantiles, the normal
quantile. Pure numpy; every function broadcasts over its arguments.

M/D/1 (Poisson arrivals at rate λ, one server, a fixed service time D, ρ = λD < 1): the mean wait in queue is
Pollaczek-Khinchine's  W_q = ρ D / (2 (1 − ρ))  (Kleinrock, Queueing Systems Vol. 1, 1975, §5.5, Eq. 5.105 with
σ² = 0). A customer waits at all with probability ρ (PASTA: the server is busy a share ρ of the time). The waiting
time's distribution is taken as that atom of 1 − ρ at 0 and, given a wait, an exponential with the mean that keeps
W_q exact (mean D / (2 (1 − ρ))): the exponential approximation of the M/G/1 tail (Tijms, A First Course in
Stochastic Models, 2003, §9.4). The load model's tests check it against a discrete-event simulation.

A step in progress when a request arrives adds a residual R, uniform on [0, T] with probability p (a step is
running) and 0 otherwise. P(R + W ≤ t) has the closed form of `wait_cdf`; `wait_quantile` inverts it by bisection.
"""

from __future__ import annotations

import numpy as np

BISECTION_STEPS = 32  # halves the bracket to 2^-32 of its width (a nanosecond on a second)


def md1_mean_wait(rate, service_s):
    """Pollaczek-Khinchine mean wait in queue of M/D/1: ρ D / (2 (1 − ρ)), ρ = λ D (inf where ρ >= 1)."""
    rho = np.asarray(rate, dtype=float) * np.asarray(service_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rho < 1.0, rho * service_s / (2.0 * (1.0 - rho)), np.inf)


def wait_cdf(t, rho, wait_mean_s, busy_share, residual_s):
    """P(R + W ≤ t): W is 0 with probability 1 − ρ, else exponential with mean θ = W_q / ρ; R is 0 with probability
    1 − p, else uniform on [0, T]. With F_W(w) = 1 − ρ e^(−w/θ) (w ≥ 0) and u = min(t, T):
    P = (1 − p) F_W(t) + (p / T) [u − ρ θ (e^(−(t − u)/θ) − e^(−t/θ))]."""
    t = np.asarray(t, dtype=float)
    rho = np.clip(np.asarray(rho, dtype=float), 0.0, 1.0)
    theta = np.where(rho > 0, np.asarray(wait_mean_s, dtype=float) / np.maximum(rho, 1e-300), 1.0)
    theta = np.maximum(theta, 1e-300)
    f_w = 1.0 - rho * np.exp(-np.maximum(t, 0.0) / theta)
    T = np.maximum(np.asarray(residual_s, dtype=float), 1e-300)
    u = np.clip(t, 0.0, T)
    with_residual = (u - rho * theta * (np.exp(-(t - u) / theta) - np.exp(-np.maximum(t, 0.0) / theta))) / T
    p = np.asarray(busy_share, dtype=float)
    return np.where(t < 0, 0.0, (1.0 - p) * f_w + p * with_residual)


def wait_quantile(q, rho, wait_mean_s, busy_share, residual_s):
    """The q-quantile of R + W (`wait_cdf`), by bisection on [0, T + θ ln(ρ / (1 − q)) + ...] (vectorised)."""
    rho = np.clip(np.asarray(rho, dtype=float), 0.0, 1.0)
    theta = np.where(rho > 0, np.asarray(wait_mean_s, dtype=float) / np.maximum(rho, 1e-300), 0.0)
    # an upper bound: the residual's whole range plus the exponential's q-quantile (ρ ≤ 1, so ln(1/(1-q)) bounds it)
    hi = np.asarray(residual_s, dtype=float) + theta * np.log(1.0 / (1.0 - q)) + 1e-12
    lo = np.zeros_like(hi)
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        below = wait_cdf(mid, rho, wait_mean_s, busy_share, residual_s) < q
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return hi


def normal_quantile(q: float) -> float:
    """z_q of the standard normal: √2 erf⁻¹(2q − 1), erf⁻¹ by Newton's method on math.erf."""
    import math

    y, x = 2.0 * q - 1.0, 0.0
    for _ in range(60):
        x -= (math.erf(x) - y) / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
    return math.sqrt(2.0) * x
