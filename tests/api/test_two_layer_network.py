"""The issue's reference network: all four parameter gradients against finite differences."""

import numpy as np
import pytest

from tests.codegen.corpus import two_layer_net
from tests.helpers import check_against_finite_differences


@pytest.mark.parametrize("batch, sizes", [(8, (3, 5, 1)), (6, (4, 7, 3)), (1, (2, 2, 2))])
def test_two_layer_network_gradients(batch, sizes):
    n_in, n_hidden, n_out = sizes
    rng = np.random.default_rng(batch)
    args = [rng.normal(size=(batch, n_in)), rng.normal(size=(n_in, n_hidden)),
            rng.normal(size=n_hidden), rng.normal(size=(n_hidden, n_out)),
            rng.normal(size=n_out), rng.normal(size=(batch, n_out))]
    check_against_finite_differences(two_layer_net, args, wrt=("W1", "b1", "W2", "b2"))
