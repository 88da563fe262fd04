"""model/search/sobol.py draws scipy.stats.qmc.Sobol's scrambled points bit for bit, without importing scipy.stats."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import qmc

from trinity_desktop.model.search.sobol import direction_numbers, sobol_points


@pytest.mark.parametrize(("d", "n", "seed"), [(1, 16, 0), (2, 64, 0), (12, 256, 0), (9, 1024, 3), (40, 4096, 1)])
def test_points_equal_scipys(d, n, seed):
    assert np.array_equal(sobol_points(d, n, seed), qmc.Sobol(d=d, scramble=True, seed=seed).random(n))


def test_unscrambled_directions_are_joe_kuos():
    """Dimension 1: v_j = 2^(29-j) (the van der Corput sequence); dimension 2 (x + 1, m_1 = 1): the first point
    after 0 is 1/2 in both, the next (0.75, 0.25) as in Joe and Kuo's table."""
    v = direction_numbers(2)
    assert v[0].tolist() == [1 << (29 - j) for j in range(30)]
    assert v[1, 0] == 1 << 29 and v[1, 1] == 3 << 28


def test_bands_do_not_import_scipy_stats():
    code = ("import sys\nfrom trinity_desktop.model.search.uncertainty import sobol_sample\n"
            "sobol_sample(6, 64, 0)\nprint('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
