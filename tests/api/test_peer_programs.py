"""Programs of the kinds other differentiation projects test, written afresh.

HIPS autograd's test suite (NumPy functions, broadcasting binary operators,
dicts, lists and tuples of parameters, builtins, graphs with fan-out, Jacobians,
derivatives of derivatives) and Google Tangent's (control flow on scalars,
overwritten names, loops of powers, subscripts, nested calls) differentiate
programs like these. Each is differentiated by ``ad.check_grad`` in reverse and
forward mode against central finite differences in float64, and those marked
``second`` also twice, four ways (``tests.helpers.check_second_order``).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_second_order

try:
    import scipy.special
except ImportError:  # the SciPy programs are left out without SciPy
    scipy = None

RNG = np.random.default_rng(20260)


def rand(*shape, low=-1.5, high=1.5):
    return RNG.uniform(low, high, size=shape)


def positive(*shape):
    return RNG.uniform(0.5, 2.0, size=shape)


def spd(n, batch=()):
    a = RNG.normal(size=(*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def well_conditioned(n, batch=()):
    return RNG.normal(size=(*batch, n, n)) + 3.0 * np.eye(n)


# --- scalar control flow (the kind Tangent tests) -----------------------------

def branch_scale(a):
    if a > 0:
        a = a * 3.0
    else:
        a = a * 2.0
    return a


def nested_branches(a):
    if a > 0:
        if a < 10:
            a = a * a
    else:
        a = 3.0 * a
    return a


def tangled_branches(a):
    b = 3.0 if a * a / 3.0 > 0 else 4.0
    a = a * b
    if a < b - a * b:
        a = a * a
    elif a > b + 3.0 * a:
        a = a / b if a / 2.0 < 0 else a * b
    else:
        a = -a
    return a


def two_arg_branch(a, b):
    if a > b:
        return a * a
    return a * b


def loops_in_series(a, n):
    for _ in range(n):
        a = a * a
    a = 2.0 * a
    for _ in range(n + 1):
        a = a * 1.5
    return a


def loop_then_branch(a, n):
    for _ in range(n):
        a = a * a
    a = 2.0 * a
    if a > 0:
        a = a * a
    return a


def conditional_power(a):
    for _ in range(3):
        if a < 20:
            a = a * a
    return a


def nested_loops_power(a):
    for _ in range(2):
        for _ in range(2):
            a = a * a
    return a


def cube_in_loop(a):
    for _ in range(2):
        a = a * a * a
    return a


def product_loop(a):
    out = 1
    for _ in range(3):
        out = out * a
    return out


def halve_until_small(a):
    while np.abs(a) > 0.1:
        a = a * 0.5
    return a


def chain_of_squares(a):
    b = a
    b = a * a
    c = b * b
    return c * c


def power_of_power(a, b):
    a = a ** b
    return a


def times(a, b):
    return a * b


def calls_in_branch(a, b):
    if a > b:
        out = times(a, b)
    else:
        out = times(b, a)
    return out


def calls_in_loop(a, n):
    for _ in range(n):
        a = times(a, a)
    return a


def nested_definition(a, n):
    def step(u, w):
        return u * w + 0.1 * u

    for _ in range(n):
        a = step(a, a)
    return a


def overwritten_by_sum(x):
    x = np.sum(x)
    x = x * x
    return x


def augmented_square(a):
    x = a * a
    x *= x
    return x


def fan_out_sines(x):
    return np.sin(np.sin(x) + np.sin(x))


def scalars_in_list(a):
    b = [1.0, a * a, 2.0]
    return np.sum(b)


def product_in_list(x):
    b = [1.0, x[0] * x[1] * x[2], 3.0]
    return np.sum(b)


def list_then_index(a):
    x = [1.0, a, 3.0]
    return x[0] * x[1]


def copy_by_rows(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i]
    return np.sum(y * y)


def broadcast_rows(x):
    h = np.zeros((len(x), 3))
    for t in range(len(h)):
        h[t] = x[t]
    return np.sum(np.sin(h) * np.arange(3.0))


def tiny_rnn(inputs, W):
    h = np.zeros((4, 3))
    for t in range(3):
        h[t + 1] = np.tanh(np.dot(inputs[t], W) + h[t])
    return np.sum(h[1:] ** 2)


def bilinear_cell(x, h, U, W, b):
    y = np.dot(x, W)
    y = y + np.dot(h, U)
    y = y + b
    return np.sum(np.tanh(y))


def logistic_loss(inputs, labels, W, b):
    z = np.dot(inputs, W) + b
    p = 0.5 * (np.tanh(z) + 1.0)
    likelihood = p * labels + (1.0 - p) * (1.0 - labels)
    return -np.sum(np.log(likelihood))


def thrice_comprehension(a):
    return np.sum([v * 3.0 for v in a])


def strided_new_axis(x):
    return np.sum(np.cos(x[::2, np.newaxis]))


def nested_dict_product(p):
    return p["i"]["j"] * p["i"]["k"]


def tuple_unpack_saxpy(abc):
    a, b, c = abc
    return a * b + c


def dict_saxpy(val):
    return val["a"] * val["b"] + val["c"]


def dict_built_then_read(abc):
    a, b, c = abc
    return dict_saxpy(dict(a=a, b=b, c=c))  # noqa: C408 (the call is what is tested)


def polar_radius_and_angle(a, b):
    r = np.sqrt(a ** 2 + b ** 2)
    theta = np.arctan2(b, a)
    return r + 2.0 * theta


# --- NumPy functions (the kind autograd's test_numpy tests) --------------------

def dot_vector_vector(x, y):
    return np.dot(x, y)


def dot_matrix_vector(A, x):
    return np.sum(np.dot(A, x) ** 2)


def dot_vector_matrix(x, A):
    return np.sum(np.sin(np.dot(x, A)))


def dot_three_by_two(A, B):
    return np.sum(np.dot(A, B) ** 2)


def dot_scalar(a, x):
    return np.sum(np.dot(a, x) ** 2)


def outer_product(x, y):
    return np.sum(np.outer(x, y) ** 2)


def outer_of_matrices(x, y):
    return np.sum(np.sin(np.outer(x, y)))


def inner_vectors(x, y):
    return np.inner(x, y) ** 2


def inner_matrices(A, B):
    return np.sum(np.inner(A, B) ** 2)


def matmul_batched(A, B):
    return np.sum(np.tanh(A @ B))


def matmul_broadcast(A, B):
    return np.sum(np.matmul(A, B) ** 2)


def matmul_vector_left(x, A):
    return np.sum((x @ A) ** 2)


def matmul_vector_right(A, x):
    return np.sum(np.cos(A @ x))


def einsum_matrix_product(A, B):
    return np.sum(np.einsum("ij,jk->ik", A, B) ** 2)


def einsum_trace(A):
    return np.einsum("ii->", A) ** 2


def einsum_transpose(A):
    return np.sum(np.einsum("ij->ji", A) * np.arange(6.0).reshape(3, 2))


def einsum_batched(A, B):
    return np.sum(np.einsum("bij,bjk->bik", A, B) ** 2)


def einsum_ellipsis(A, B):
    return np.sum(np.sin(np.einsum("...ij,...jk->...ik", A, B)))


def einsum_three_operands(x, A, y):
    return np.einsum("i,ij,j->", x, A, y)


def einsum_implicit(A, B):
    return np.sum(np.einsum("ij,jk", A, B) ** 2)


def einsum_diagonal(A):
    return np.sum(np.einsum("ii->i", A) ** 3)


def einsum_sum_axis(A):
    return np.sum(np.einsum("ijk->j", A) ** 2)


def tensordot_axes_int(A, B):
    return np.sum(np.tensordot(A, B, axes=1) ** 2)


def tensordot_axes_pairs(A, B):
    return np.sum(np.tensordot(A, B, axes=([0, 2], [1, 0])) ** 2)


def max_of_equal_pair(x):
    return np.max(np.array([x, x]))


def max_of_equal_grid(x):
    return np.sum(np.max(np.array([[x, x], [x, x]]), axis=1))


def min_three_way_tie(x):
    return np.min(np.array([x, x, x]), axis=0)


def maximum_of_itself(x):
    return np.sum(np.maximum(x, x))


def minimum_of_itself(x):
    return np.sum(np.minimum(x, x) * x)


def max_along_axes(x):
    return np.sum(np.max(x, axis=1) ** 2) + np.sum(np.min(x, axis=0, keepdims=True) * x)


def amax_keepdims_tie(x):
    y = np.concatenate([x, x], axis=1)
    return np.sum(np.amax(y, axis=1, keepdims=True) * np.arange(1.0, 4.0)[:, None])


def max_over_two_axes(x):
    return np.sum(np.max(x, axis=(0, 2)) ** 2)


def where_with_ties(x, y):
    return np.sum(np.where(x > y, x, y) * x)


def clip_inside(x):
    return np.sum(np.clip(x, -0.8, 0.8) ** 2)


def maximum_broadcast(x, y):
    return np.sum(np.maximum(x, y) ** 2)


def index_int(x):
    return x[2] ** 2


def index_negative(x):
    return x[-1] * x[-2]


def slice_reversed(x):
    return np.sum(x[::-1] * np.arange(5.0))


def slice_negative_step(x):
    return np.sum(x[5:0:-2] ** 2)


def slice_2d_reversed(A):
    return np.sum(A[1:, ::-1].T * np.arange(12.0).reshape(4, 3))


def index_list_repeats(x):
    return np.sum(x[[0, 2, 0, 4]] ** 2)


def index_columns(A):
    return np.sum(A[:, [2, 0]] ** 3)


def index_pairs(A):
    return np.sum(A[[0, 1, 2], [3, 1, 0]] ** 2)


def index_bool_mask(x):
    return np.sum(x[x > 0] ** 2)


def index_constant_mask(x):
    mask = np.array([True, False, True, True, False])
    return np.sum(np.sin(x[mask]))


def index_ellipsis(A):
    return np.sum(A[..., -1] ** 2) + np.sum(A[None, :, 1])


def index_fanout(x):
    a = x[1:3]
    b = x[2:4]
    return np.sum(a * b) + np.sum(a)


def index_multiple_slices(A):
    return np.sum(A[1:3, 0:2] * A[0:2, 2:4])


def index_then_dot(A, B):
    return np.sum(np.dot(A[1:, :], B[:, :2]) ** 2)


def reshape_method(x):
    return np.sum(x.reshape((2, 3)) ** 2 * np.arange(3.0))


def reshape_call(x):
    return np.sum(np.reshape(x, (3, 2)) ** 3)


def reshape_method_args(x):
    return np.sum(x.reshape(3, -1).T.reshape(-1) * np.arange(6.0))


def ravel_and_flatten(A):
    return np.sum(A.ravel() ** 2) + np.sum(np.ravel(A) * A.flatten())


def transpose_axes(A):
    return np.sum(np.transpose(A, (2, 0, 1)) * np.arange(24.0).reshape(4, 2, 3))


def swap_and_move(A):
    return np.sum(np.swapaxes(A, 0, 2) ** 2) + np.sum(np.moveaxis(A, 0, -1)[..., 0])


def squeeze_expand(x):
    y = np.expand_dims(x, 1)
    return np.sum(np.squeeze(y * y, axis=1) * x)


def concatenate_lists(x, y):
    return np.sum(np.concatenate([x, y, x]) ** 2)


def stack_axis(x, y):
    return np.sum(np.stack([x, y * y], axis=1) * np.arange(2.0))


def hstack_vstack(x, y):
    return np.sum(np.hstack([x, y]) ** 2) + np.sum(np.vstack([x, y]) ** 3)


def tile_and_repeat(x):
    return np.sum(np.tile(x, (2, 1)) ** 2 * np.arange(3.0)) + np.sum(np.repeat(x, 2) ** 3)


def repeat_axis(A):
    return np.sum(np.repeat(A, [1, 2], axis=0) ** 2 * np.arange(3.0))


def kron_product(A, B):
    return np.sum(np.kron(A, B) ** 2)


def diag_and_diagonal(x, A):
    return np.sum(np.diag(x) * A) + np.sum(np.diagonal(A) ** 2) + np.trace(A) ** 2


def triangles(A):
    return np.sum(np.triu(A) ** 2) + np.sum(np.tril(A, -1) * A)


def flip_and_roll(x):
    return np.sum(np.flip(x) * np.roll(x, 1) * np.arange(5.0))


def rotate(A):
    return np.sum(np.rot90(A) * np.arange(6.0).reshape(3, 2))


def cumulative(x):
    return np.sum(np.cumsum(x) ** 2) + np.sum(np.cumprod(x))


def cumulative_axis(A):
    return np.sum(np.cumsum(A, axis=1) ** 2)


def product_all(x):
    return np.prod(x)


def product_axis(A):
    return np.sum(np.prod(A, axis=0))


def product_with_zero(x):
    y = x * np.array([1.0, 0.0, 1.0, 1.0])
    return np.prod(y + np.array([0.0, 0.0, 0.5, 0.0]))


def variance_ddof(x):
    return np.var(x, ddof=1) + np.std(x, axis=0, ddof=1).sum()


def mean_keepdims(A):
    return np.sum((A - np.mean(A, axis=1, keepdims=True)) ** 2)


def norms(x, A):
    return (np.linalg.norm(x) + np.linalg.norm(A, axis=1).sum()
            + np.linalg.norm(A, "fro") + np.linalg.norm(x, 1, axis=0) + np.linalg.norm(x, np.inf, axis=-1))


def sort_values(x):
    return np.sum(np.sort(x) * np.arange(5.0))


def pad_constant(A):
    return np.sum(np.pad(A, 1) ** 2 * np.arange(5.0))


def elementwise_menagerie(x):
    return np.sum(np.log1p(x * x) + np.expm1(x / 3.0) + np.sinc(x) + np.exp2(x)
                  + np.log2(x * x + 1.0) + np.log10(x * x + 2.0) + np.square(x)
                  + np.cbrt(x * x + 1.0) + np.deg2rad(x) + np.rad2deg(x) + np.fabs(x)
                  + np.arcsinh(x) + np.arctan(x) + np.tanh(x) + np.sign(x) * x)


def inverse_trig(x):
    return np.sum(np.arcsin(x) + np.arccos(x) + np.arctanh(x))


def binary_menagerie(x, y):
    return np.sum(np.hypot(x, y) + np.arctan2(x, y) + np.logaddexp(x, y)
                  + np.logaddexp2(x, y) + np.true_divide(x, y + 3.0) + np.power(y * y + 1.0, x))


def mod_and_remainder(x, y):
    return np.sum(np.mod(x, y) + np.remainder(y, 0.7))


def negative_base_integer_power(x):
    return np.sum(x ** 3 + np.power(x, 2) + x ** -2)


def nan_to_num_of_finite(x):
    return np.sum(np.nan_to_num(x) ** 2)


def atleast_2d_then_dot(x):
    return np.sum(np.atleast_2d(x).T @ np.atleast_2d(x))


def comparisons_gate(x, y):
    return np.sum((x < y) * x ** 2 + (x >= y) * y)


def singleton_output(x):
    return np.sum(np.sin(x), keepdims=True)


def singleton_output_axis(x):
    return np.sum(np.sin(x), axis=0, keepdims=True)


def constant_output(x):
    return 1.0


def identity(x):
    return x


# --- linear algebra -------------------------------------------------------

def det_batched(A):
    return np.sum(np.linalg.det(A) ** 2)


def slogdet_of_spd(A):
    sign, logdet = np.linalg.slogdet(A)
    return sign * logdet


def inverse_batched(A):
    return np.sum(np.linalg.inv(A) ** 2)


def solve_batched_vector(A, b):
    return np.sum(np.linalg.solve(A, b[..., None]) ** 2)


def solve_matrix(A, B):
    return np.sum(np.linalg.solve(A, B) ** 2)


def cholesky_of_spd(A):
    L = np.linalg.cholesky(A)
    return np.sum(L * np.arange(9.0).reshape(3, 3))


def eigh_values(A):
    w, _ = np.linalg.eigh(A)
    return np.sum(w * np.array([1.0, 2.0, 3.0]))


def pinv_matrix(A):
    return np.sum(np.linalg.pinv(A) ** 2)


def matrix_power_two(A):
    return np.sum(np.linalg.matrix_power(A, 3))


def svd_values(A):
    return np.sum(np.linalg.svd(A, compute_uv=False) * np.array([2.0, 1.0]))


# --- SciPy ------------------------------------------------------------------

def special_functions(x):
    sp = scipy.special
    return np.sum(sp.gammaln(x) + sp.digamma(x) + sp.erf(x) + sp.erfc(x) + sp.expit(x)
                  + sp.polygamma(1, x))


def logsumexp_axis(A):
    return np.sum(scipy.special.logsumexp(A, axis=1, keepdims=True) * A)


def logsumexp_weights(x):
    return scipy.special.logsumexp(x, b=np.array([1.0, 2.0, 0.5]))


# --- structures, builtins and Python functions -----------------------------

def mlp_dict(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.sum((h @ params["W2"] + params["b2"]) ** 2)


def mlp_list_of_pairs(layers, x):
    for W, b in layers:
        x = np.tanh(x @ W + b)
    return np.sum(x ** 2)


def tuple_of_arrays(pair):
    return np.sum(pair[0] * pair[1]) + np.sum(pair[1] ** 2)


def list_of_scalars(values):
    total = 0.0
    for i, v in enumerate(values):
        total = total + (i + 1) * v ** 2
    return total


def nested_structures(params):
    return np.sum(params["layers"][0] ** 2) + params["scale"][1] * np.sum(params["layers"][1])


def dict_items_loop(weights):
    total = 0.0
    for name, w in weights.items():
        total = total + np.sum(w ** 2) * len(name)
    return total


def builtin_sum_of_array(A):
    return np.sum(sum(A) ** 2)


def builtin_sum_of_list(x, y):
    return np.sum(sum([x, y * y, x * y]))


def builtin_abs_max_min(a, b):
    return max(a, b) * abs(a - b) + min(a, b) ** 2


def builtin_max_of_list(x):
    return max(max(x[0], x[1] * 2.0), x[2]) + min(x[3], x[4])


def builtin_pow_and_abs(x):
    return np.sum(pow(abs(x), 3) + pow(x, 2))


def builtin_len_mean(x):
    return np.sum(x) / len(x)


def math_functions(a):
    return math.sin(a) * math.exp(a) + math.sqrt(a * a + 1.0) + math.log(a * a + 2.0)


def closure_scale(x):
    k = np.sum(x)

    def inner(y):
        return y * k

    return np.sum(inner(x) ** 2)


def lambda_inside(x):
    square = lambda v: v * v
    return np.sum(square(np.sin(x)))


def with_default(x, power=3):
    return np.sum(x ** power)


def calls_default(x):
    return with_default(x) + with_default(x, power=2)


def early_exit(x):
    total = 0.0
    for v in x:
        if v > 1.0:
            break
        total = total + v * v
    return total


def early_return(x):
    for i in range(len(x)):
        if x[i] > 1.2:
            return x[i] * 2.0
    return np.sum(x)


def while_counted(x):
    i = 0
    acc = x
    while i < 3:
        acc = np.sin(acc) + x
        i += 1
    return np.sum(acc)


def while_on_data(x):
    y = x
    while np.sum(y ** 2) > 0.5:
        y = 0.6 * y
    return np.sum(y * x)


def reduce_product(x):
    return functools.reduce(lambda a, b: a * b, [x[0], x[1], x[2]])


def continue_skips(x):
    total = 0.0
    for i in range(len(x)):
        if i % 2 == 1:
            continue
        total = total + np.exp(x[i])
    return total


def hessian_vector_program(x, v):
    dfun = ad.grad(sin_of_projection)
    return np.sin(np.dot(v, dfun(x)))


PROJECTION = RNG.normal(size=5)


def sin_of_projection(x):
    return np.sin(np.dot(x, PROJECTION))


def value_and_grad_inside(x):
    value, g = ad.value_and_grad(fan_out_sines)(x)
    return value * g


# --- a second round: harder corners ---------------------------------------

def chained_negative_slices(x):
    return np.sum(x[::-1][1:][::2] * np.arange(3.0)) + np.sum(x[-1:-4:-1] ** 2)


def out_of_range_negative_slice(x):
    return np.sum(x[10:-10:-1] * np.arange(6.0))


def reversed_rows_strided_columns(A):
    return np.sum(A[::-1, ::-2] ** 2 * np.arange(2.0))


def write_slices_of_buffer(x):
    y = np.zeros(6)
    y[1:4] = x[:3] * 2.0
    y[::-2] = y[::-2] + x[3:] ** 2
    return np.sum(y * np.arange(6.0))


def write_mask_of_buffer(x):
    y = np.ones_like(x)
    y[x > 0] = x[x > 0] ** 2
    return np.sum(y * x)


def index_by_argmax(x):
    return x[np.argmax(x)] * np.sum(x)


def methods_everywhere(A):
    return (A.sum(axis=0)[:3].dot(A.mean(axis=1)) + A.var() + A.std(axis=1).sum()
            + A.prod() + A.cumsum().sum() + A.clip(-0.5, 0.5).sum() + A.T.max(axis=0).sum()
            + A.min() + A.reshape(-1, 2).ravel().sum() + A.transpose(1, 0)[0].sum())


def sum_negative_axes(A):
    return np.sum(np.sum(A, axis=(-1, 0), keepdims=True) * A) + np.mean(A, axis=-2).sum()


def einsum_corners(x, A):
    return (np.einsum("i,j->ij", x, x).sum() + np.einsum("ij,ij->", A, A)
            + np.einsum("...i,i->...", A, x).sum() + np.einsum("ji", A).sum())


def tensordot_outer_and_full(A, B):
    return np.sum(np.tensordot(A, B, axes=0) ** 2) + np.tensordot(A, B, axes=2)


def diff_and_average(x):
    return np.sum(np.diff(x) ** 2) + np.average(x, weights=np.array([1.0, 2.0, 3.0, 4.0]))


def array_of_parts(x):
    y = np.array([x[0] * x[1], x[2], 1.0])
    z = np.asarray(y).astype(float)
    return np.sum(z * z)


def pow_broadcast_shapes(x, y):
    return np.sum(x ** y + y / x - x * y)


def floors_and_rounds(x):
    return np.sum(np.floor(x) * x + np.ceil(x) + np.round(x) + np.rint(x) * x + x // 1.0)


def third_derivative(x):
    return np.sin(np.sin(x) + np.sin(x))


DDDF = ad.grad(ad.grad(ad.grad(third_derivative)))


def third_derivative_program(x):
    return DDDF(x) * x


def generator_sum(x):
    return sum(x[i] ** 2 for i in range(3)) + sum(v for v in x)


def zip_enumerate(x, y):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        total = total + i * a * b
    return total


def keyword_only(x, *, scale=2.0):
    return np.sum(np.sin(x) * scale)


def calls_keyword_only(x, y):
    return keyword_only(x) + keyword_only(y, scale=0.5)


def softmax_cross_entropy(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(len(labels)), labels])


def pairwise_distances(X):
    d = X[:, None, :] - X[None, :, :]
    return np.sum(np.sqrt(np.sum(d ** 2, axis=-1) + 1e-3))


def rbf_kernel_quadratic(X, y):
    sq = np.sum(X ** 2, 1)[:, None] + np.sum(X ** 2, 1)[None, :] - 2.0 * X @ X.T
    K = np.exp(-0.5 * sq) + 0.5 * np.eye(len(X))
    return y @ np.linalg.solve(K, y) + np.linalg.slogdet(K)[1]


def relu_and_leaky(x):
    return np.sum(np.maximum(x, 0.0) ** 2 + np.where(x > 0, x, 0.01 * x))


def batch_norm(X, gamma, beta):
    mu = X.mean(axis=0)
    var = X.var(axis=0)
    return np.sum((gamma * (X - mu) / np.sqrt(var + 1e-5) + beta) ** 2 * np.arange(3.0))


def convolve_by_loop(x, w):
    out = []
    for i in range(len(x) - 2):
        out.append(x[i:i + 3] @ w)
    return np.sum(np.array(out) ** 2)


def eye_scaled(x):
    n = len(x)
    return np.sum((np.eye(n) * x + np.full_like(x, 2.0) * np.ones_like(x)) ** 2)


def cumulative_product_loop(x):
    p = 1.0
    out = []
    for v in x:
        p = p * v
        out.append(p)
    return np.sum(np.stack(out))


def eigh_vectors(A):
    w, V = np.linalg.eigh(A)
    return np.sum(w * np.array([1.0, 2.0, 3.0])) + np.sum(np.abs(V[:, -1]) * np.array([1.0, 0.5, 0.2]))


def take_and_take_along(x, A):
    idx = np.argsort(A, axis=1)
    return np.sum(np.take(x, [2, 0, 2]) ** 2) + np.sum(np.take_along_axis(A, idx, axis=1) * np.arange(4.0))


def prod_two_zeros(x):
    y = x * np.array([0.0, 1.0, 0.0, 1.0])
    return np.prod(y + np.array([0.0, 0.0, 0.0, 0.5]))


def prod_axis_with_zero(A):
    mask = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 1.0]])
    return np.sum(np.prod(A * mask, axis=0) * np.array([1.0, 2.0]))


def cumprod_with_zero(x):
    return np.sum(np.cumprod(x * np.array([1.0, 0.0, 1.0, 1.0])))


def while_with_break(x):
    y = x
    k = 0
    while True:
        y = np.tanh(y) + 0.5 * x
        k += 1
        if k >= 3:
            break
    return np.sum(y ** 2)


def loop_defaults_capture(x):
    total = 0.0
    for k in range(1, 4):
        scaled = lambda v, k=k: v * k
        total = total + np.sum(scaled(x) ** 2)
    return total


def closure_over_update(x):
    scale = 1.0
    for _ in range(2):
        scale = scale * np.sum(x)

    def apply(v):
        return v * scale

    return np.sum(apply(x) ** 2)


def all_positive_gate(x):
    if np.all(x > -5.0) and np.any(x < 5.0):
        return np.sum(x ** 3)
    return np.sum(x)


def det_small(A):
    return np.linalg.det(A) + np.linalg.det(A[:1, :1])


def solve_plain_vector(A, b):
    return np.sum(np.linalg.solve(A, b) ** 2) + np.sum(np.linalg.inv(A) @ b)


def solve_batched_matrix(A, B):
    return np.sum(np.linalg.solve(A, B) ** 2)


def matrix_chain(A):
    return np.sum(A @ A @ A) + np.sum(A.T @ A)


def variance_keepdims(A):
    return np.sum(np.std(A, axis=1, keepdims=True) * A) + np.sum(np.var(A, axis=0, ddof=1))


def mean_of_scalar_args(a, b):
    return np.mean(np.array([a, b, a * b])) + np.abs(a) * b


def one_hot_log_likelihood(W, X, labels):
    logits = X @ W
    logp = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True) if scipy else logits
    return np.sum(logp * np.eye(3)[labels])


# --- a third round: views, updates of made arrays, ties that finite differences see ---

def scale_slice_in_place(x):
    b = np.ones(5)
    b[1:4] *= x[:3]
    b[::2] += x[2]
    return np.sum(b ** 2)


def pair_maker(x):
    return np.sin(x), np.cos(x)


def unpack_helper_pair(x):
    s, c = pair_maker(x)
    return np.sum(s * c)


def nested_array_display(x):
    M = np.array([[x[0], x[1]], [x[1] * x[0], 1.0]])
    return np.linalg.det(M) + np.sum(M @ M)


def chained_comparison(a):
    if 0.0 < a < 1.0:
        return a ** 3
    return a


def scalar_abs_by_branch(a):
    return a if a > 0 else -a


def logical_masks(x):
    mask = np.logical_and(x > -1.0, x < 1.0)
    other = np.logical_or(x < -1.2, ~mask)
    return np.sum(np.where(mask, x ** 2, 0.0) + np.where(other, np.sin(x), 0.0))


def zero_d_array_argument(a):
    return np.sin(a) * a ** 2


def keyword_argument_wrt(x, b=1.0):
    return np.sum(np.exp(b * x))


def broadcast_and_expand(x):
    y = np.broadcast_to(x, (3, 4))
    z = np.expand_dims(x, axis=(0, 2))
    return np.sum(y ** 2) + np.sum(np.squeeze(z) ** 3)


def outer_by_broadcasting(x):
    return np.sum(np.tanh(x[..., None] * x[None, ...]))


def column_major_by_transposes(x):
    return np.sum(x.reshape(3, 2).T * np.arange(6.0).reshape(2, 3)) + np.sum(
        np.ravel(x.reshape(3, 2).T) * np.arange(6.0))


def transpose_all(A):
    return np.sum(np.transpose(A) * np.arange(24.0).reshape(4, 3, 2))


def concatenate_variants(x, y):
    return (np.sum(np.concatenate([x, y], axis=None) ** 2)
            + np.sum(np.stack([x, y], axis=-1) * np.array([1.0, 2.0]))
            + np.sum(np.column_stack([x, y]) ** 3) + np.sum(np.dstack([x, y]) ** 2))


def max_two_way_ties(x):
    y = np.array([x[0], x[1], x[1], x[2]])
    return np.max(y) + np.sum(np.max(np.stack([x, x[::-1]]), axis=0))


def maximum_at_equal_values(x, y):
    return np.sum(np.maximum(x, y) + np.minimum(x, y) * 2.0)


def abs_at_zero(x):
    return np.sum(np.abs(x - np.array([0.0, 0.5, 0.0])))


def mask_from_comparison_count(x):
    return np.sum(x > 0) * np.sum(x ** 2)


def integer_power_loop_early(A):
    M = np.eye(3)
    for k in range(5):
        if k == 3:
            break
        M = M @ A
    return np.sum(M)


def while_data_array_update(x):
    y = x.copy()
    steps = 0
    while np.max(np.abs(y)) > 0.2 and steps < 10:
        y = y * 0.5 + 0.01 * np.sin(y)
        steps += 1
    return np.sum(y * x)


def quadratic_form(x, A):
    return x @ A @ x


def log_det_via_cholesky(A):
    L = np.linalg.cholesky(A)
    return 2.0 * np.sum(np.log(np.diag(L)))


def gaussian_log_density(x, mu, L):
    Sigma = L @ L.T + np.eye(3)
    diff = x - mu
    return -0.5 * diff @ np.linalg.solve(Sigma, diff) - 0.5 * np.linalg.slogdet(Sigma)[1]


def norm_regularised(W):
    return np.linalg.norm(W) ** 2 + np.sum(np.linalg.norm(W, axis=0)) + np.linalg.norm(W, ord=2, axis=1).sum()


def vector_valued(x):
    return np.array([np.sin(x[0]) * x[1], x[0] ** 2, np.exp(x[1] - x[2])])


def hessian_target(x):
    return np.sum(np.sin(x) * np.roll(x, 1)) + np.prod(x)


# --- a fourth round: binary operators over broadcasting shapes, more vocabulary ---

def op_add(x, y):
    return np.sum(np.sin(x + y))


def op_subtract(x, y):
    return np.sum(np.sin(x - y) * (x - 2.0 * y))


def op_multiply(x, y):
    return np.sum(np.cos(x * y))


def op_divide(x, y):
    return np.sum(np.tanh(x / (y * y + 0.5)))


def op_power(x, y):
    return np.sum((x * x + 0.5) ** y)


def op_arctan2(x, y):
    return np.sum(np.arctan2(x, y + 3.0))


def op_hypot(x, y):
    return np.sum(np.hypot(x, y))


def op_logaddexp(x, y):
    return np.sum(np.logaddexp(x, y) ** 2)


def op_maximum(x, y):
    return np.sum(np.maximum(x, y + 0.01) ** 2)


def op_true_divide_method(x, y):
    return np.sum(np.true_divide(x, 2.0 + np.exp(y)))


BINARY_OPS = [op_add, op_subtract, op_multiply, op_divide, op_power, op_arctan2, op_hypot,
              op_logaddexp, op_maximum, op_true_divide_method]
BINARY_SHAPES = [((), (3,)), ((3,), ()), ((2, 1), (1, 3)), ((3,), (2, 3)), ((2, 3), (1,)),
                 (None, (2, 2)), ((4,), None)]


def vocabulary(x, A):
    return (np.trace(A, offset=1) + np.sum(np.diagonal(A, offset=-1) ** 2)
            + np.sum(np.tril(A, k=1) * A) + np.sum(np.roll(A, 1, axis=1) * A)
            + np.sum(np.cross(x, x[::-1] ** 2)) + np.sum(np.fliplr(A) * np.flipud(A))
            + np.dot(x, x) + np.sum(np.linalg.multi_dot([A, A, A]))
            + np.sum(np.clip(x, np.array([-0.1, 0.0, -2.0]), 2.0) ** 2)
            + np.ptp(A) + np.median(x) + np.sum(np.sinh(x) * np.cosh(x)))


def einsum_more(A, B, x):
    return (np.einsum("ij,jk,kl->il", A, B, A).sum()
            + np.einsum("i,i", x, x) + np.einsum("ij,ij->i", A, A).sum())


def dot_higher(A, B, x):
    return np.sum(np.dot(A, B) ** 2) + np.sum(np.matmul(x, x)) + np.sum(np.tensordot(A, B, axes=([2], [1])))


def linspace_and_full(a, b):
    t = np.linspace(a, b, 5)
    return np.sum(t ** 2 * np.full(5, 0.5))


def mean_of_mask(x):
    return np.mean(x > 0.0) * np.sum(x ** 2) + np.sum(np.nonzero(x > 0.0)[0] * 1.0) * np.sum(x)


def more_special(x):
    sp = scipy.special
    return np.sum(sp.logit(x) + sp.erfinv(x - 0.5) + sp.gamma(x + 1.0) + sp.betaln(x, 2.0 - x)
                  + sp.xlogy(x, x + 1.0) + sp.xlog1py(x, x) + sp.entr(x)
                  + sp.multigammaln(x + 2.0, 2) + sp.i0(x) + sp.i1(x))


def softmax_special(x):
    return np.sum(scipy.special.softmax(x, axis=1) * np.arange(3.0)) + np.sum(
        scipy.special.log_softmax(x, axis=0) ** 2)


def has_aux_target(x):
    return np.sum(x ** 2), {"norm": np.sqrt(np.sum(x * x))}


def aux_program(x):
    g, aux = GRAD_WITH_AUX(x)
    return np.sum(g * x) * aux["norm"]


# --- a fifth round: autograd's test_numpy corners ------------------------------

def index_mixed_advanced(x):
    return np.sum(x[3, 2:, [1, 3]] * np.arange(8.0).reshape(2, 4))


def index_advanced_then_slice(x):
    return np.sum(x[[0, 2], :, 1] ** 2) + np.sum(x[:, [1, 0], 1:3] * x[:, :2, :2])


def index_slices_fanout(x):
    y = x[::-1, 2:4, :]
    z = x[::-1, 3:5, :]
    return np.sum(np.sin(y + z))


def index_dot_slices(x):
    return np.dot(x[:2], x[2:])


def slice_of_slice(x):
    y = x[2:6]
    return np.sum(y[1:3] ** 2)


def scalars_to_array(a):
    return np.sum(np.array([[a, a * 1.0, a + 2.5], [a ** 2, a, a / 2.0]]) ** 2)


def array_from_scalar(a):
    return np.array(a) ** 3


def array_of_arrays_fanout(x):
    A = np.array([[2.0 * x, x + 1.0], [x, x]])
    return np.sum((A + A) ** 2)


def assert_length(x):
    assert len(x) == 3
    return np.sum(x ** 2)


def r_and_c(x):
    c = np.array([0.5, -0.5, 1.0])
    return np.sum(np.r_[x, c, x] ** 2) + np.sum(np.c_[x, c] ** 3)


def append_values(x, b):
    return np.sum(np.append(x, b) ** 2) + np.sum(np.append(x[:2], x[1:]) * 0.5)


def trace_offsets(A, B):
    return np.trace(A, offset=2) + np.trace(A, offset=-1) + np.sum(np.trace(B, offset=1))


def diagonal_last_axes(D):
    return np.sum(np.diagonal(D, axis1=-1, axis2=-2) ** 2)


def int_cast_index(W):
    new_W = W[:, :-1]
    rows = W[:, -1].astype(np.int64)
    return new_W[rows].sum()


def nan_to_num_constants(x):
    y = np.array([0.0, np.nan, np.inf, -np.inf])
    return np.sum(np.sin(np.nan_to_num(x + y)))


def where_constant_mask(x, y):
    mask = np.array([[True, False, True], [False, False, True]])
    return np.sum(np.where(mask, x, y) ** 2)


def repeat_variants(x):
    return (np.sum(np.repeat(x, 2, axis=1) ** 2) + np.sum(np.repeat(x, 1, axis=0) * x)
            + np.sum(np.repeat(x[0, 0], 3) ** 3))


def tensordot_positional(a):
    return np.tensordot(a * np.ones((2, 2)), a * np.ones((2, 2)), 2)


def concatenate_positional_axis(x):
    B = np.ones((2, 3, 2))
    return np.sum(np.concatenate((B, x, B), 1) ** 2)


def squeeze_forms(x):
    return np.sum(np.squeeze(x) ** 2) + np.sum(x.squeeze() * 2.0) + np.sum(np.expand_dims(x, 2) ** 3)


def dot_with_floats(a, A):
    return np.sum(np.dot(A, a) ** 2) + np.sum(np.dot(a, A[0]) ** 2)


def sum_of_pair_builtin(x, y):
    return np.sum(sum([x, y]) ** 2)


def var_std_combos(B, C):
    return (np.var(B, keepdims=True).sum() + np.std(C, axis=1, ddof=2).sum()
            + np.var(C, axis=None, ddof=1) + np.std(B, ddof=1, keepdims=True).sum())


def matrix_from_diagonal_batch(D):
    A = D[..., :, None] * np.eye(D.shape[-1])
    return np.sum(A ** 2 * np.arange(16.0).reshape(4, 4))


# --- a sixth round: control flow in depth -----------------------------------

def while_inside_for(x):
    out = 0.0
    for v in x:
        k = 0
        while k < 2 and v * k < 1.0:
            v = v * 1.5 + 0.1
            k += 1
        out = out + v ** 2
    return out


def return_inside_while(x):
    y = x
    while True:
        y = np.sin(y) + 0.5
        if np.sum(y) > 0.0:
            return np.sum(y * x)


def nested_break_continue(A):
    total = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if j == 1:
                continue
            if j == 3:
                break
            total = total + A[i, j] * A[j % A.shape[0], i]
    return total


def buffer_loop_reads_previous(x):
    out = np.zeros(len(x))
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = np.tanh(out[i - 1] * 0.8 + x[i])
    return np.sum(out ** 2)


def buffer_rows_in_place_add(X):
    acc = np.zeros((2, X.shape[1]))
    for i in range(X.shape[0]):
        acc[i % 2] += X[i] ** 2
    return np.sum(acc * np.array([[1.0], [2.0]]))


def accumulate_in_list_then_stack(x):
    states = [x]
    for _ in range(3):
        states.append(np.cos(states[-1]) * x)
    return np.sum(np.stack(states) ** 2)


def loop_over_rows_with_index(A, v):
    total = 0.0
    for i, row in enumerate(A):
        total = total + (i + 1) * np.dot(row, v) ** 2
    return total


def reversed_range_loop(x, n):
    h = x
    for i in reversed(range(n)):
        h = np.sin(h) * (i + 1)
    return np.sum(h)


def data_dependent_branch_in_loop(x):
    h = x
    for _ in range(4):
        if np.sum(h) > 0.0:
            h = h * 0.5 - 0.3
        else:
            h = h * 1.2 + 0.4
    return np.sum(h * x)


def nested_function_closure_loop(x):
    def cell(h, w):
        return np.tanh(h * w + x)

    h = np.zeros_like(x)
    for k in range(3):
        h = cell(h, 0.5 + 0.1 * k)
    return np.sum(h)


def recursive_style_unrolled(x):
    def power(v, n=3):
        out = 1.0
        for _ in range(n):
            out = out * v
        return out

    return np.sum(power(x) + power(x, n=2))


def min_over_loop(x):
    best = x[0]
    for v in x[1:]:
        best = np.minimum(best, v)
    return best


def python_max_over_loop(x):
    best = -100.0
    for v in x:
        if v > best:  # noqa: PLR1730 (the branch is what is tested)
            best = v
    return best * 2.0


def counter_driven_while(x, n):
    i = 0
    s = 0.0
    while i < n:
        s = s + x[i] * (i + 1)
        i = i + 1
    return s


# --- a seventh round: indices known only at run time --------------------------

def gather_by_argument(x, idx):
    return np.sum(x[idx] ** 2 * np.arange(1.0, len(idx) + 1.0))


def mask_by_argument(x, mask):
    return np.sum(np.exp(x[mask]))


def runtime_slice_bounds(x, i, j):
    return np.sum(x[i:j] ** 2) + np.sum(x[-i:] * 2.0)


def runtime_step(x, k):
    return np.sum(x[::k] ** 3) + np.sum(x[::-k] * np.arange(float(len(x[::-k]))))


def negative_int_argument(x, i):
    return x[i] * x[i - 1]


def rows_by_argument(A, rows):
    return np.sum(A[rows, 1:] ** 2) + np.sum(A[:, rows[0]])


def gather_columns_loop(A, cols):
    total = 0.0
    for c in cols:
        total = total + np.sum(A[:, c] ** 2)
    return total


# Each case: (function, arguments, wrt, second order?)
CASES = {
    "branch_scale": (branch_scale, (1.3,), 0, True),
    "branch_scale_negative": (branch_scale, (-0.7,), 0, True),
    "nested_branches": (nested_branches, (2.0,), 0, True),
    "nested_branches_negative": (nested_branches, (-2.0,), 0, True),
    "tangled_branches": (tangled_branches, (0.7,), 0, True),
    "tangled_branches_negative": (tangled_branches, (-0.7,), 0, True),
    "two_arg_branch": (two_arg_branch, (0.4, 1.1), (0, 1), True),
    "loops_in_series": (loops_in_series, (1.1, 2), 0, True),
    "loop_then_branch": (loop_then_branch, (-1.1, 3), 0, True),
    "conditional_power": (conditional_power, (1.3,), 0, True),
    "nested_loops_power": (nested_loops_power, (1.05,), 0, True),
    "cube_in_loop": (cube_in_loop, (0.9,), 0, True),
    "product_loop": (product_loop, (1.7,), 0, True),
    "halve_until_small": (halve_until_small, (3.3,), 0, True),
    "chain_of_squares": (chain_of_squares, (1.1,), 0, True),
    "power_of_power": (power_of_power, (1.4, 2.3), (0, 1), True),
    "calls_in_branch": (calls_in_branch, (0.5, 2.0), (0, 1), True),
    "calls_in_loop": (calls_in_loop, (1.1, 3), 0, True),
    "nested_definition": (nested_definition, (0.9, 2), 0, True),
    "overwritten_by_sum": (overwritten_by_sum, (rand(4),), 0, True),
    "augmented_square": (augmented_square, (1.2,), 0, True),
    "fan_out_sines": (fan_out_sines, (0.3,), 0, True),
    "fan_out_sines_array": (fan_out_sines, (rand(3),), 0, False),
    "scalars_in_list": (scalars_in_list, (1.5,), 0, True),
    "product_in_list": (product_in_list, (rand(3),), 0, True),
    "list_then_index": (list_then_index, (0.8,), 0, True),
    "copy_by_rows": (copy_by_rows, (rand(4, 2),), 0, True),
    "broadcast_rows": (broadcast_rows, (rand(3, 1),), 0, True),
    "tiny_rnn": (tiny_rnn, (rand(3, 2), rand(2, 3)), (0, 1), True),
    "bilinear_cell": (bilinear_cell, (rand(2), rand(3), rand(3, 4), rand(2, 4), rand(4)),
                      (0, 1, 2, 3, 4), True),
    "logistic_loss": (logistic_loss, (rand(5, 3), np.array([1.0, 0.0, 1.0, 1.0, 0.0]),
                                      rand(3), 0.2), (2, 3), True),
    "thrice_comprehension": (thrice_comprehension, (rand(4),), 0, True),
    "strided_new_axis": (strided_new_axis, (rand(5, 2),), 0, True),
    "nested_dict_product": (nested_dict_product, ({"i": {"j": 1.3, "k": -0.4}},), 0, False),
    "tuple_unpack_saxpy": (tuple_unpack_saxpy, ((1.1, 0.5, -0.3),), 0, False),
    "dict_saxpy": (dict_saxpy, ({"a": 1.1, "b": 0.5, "c": -0.3},), 0, False),
    "dict_built_then_read": (dict_built_then_read, ((1.1, 0.5, -0.3),), 0, False),
    "polar_radius_and_angle": (polar_radius_and_angle, (0.7, -1.2), (0, 1), True),
    "dot_vector_vector": (dot_vector_vector, (rand(4), rand(4)), (0, 1), True),
    "dot_matrix_vector": (dot_matrix_vector, (rand(3, 4), rand(4)), (0, 1), True),
    "dot_vector_matrix": (dot_vector_matrix, (rand(3), rand(3, 4)), (0, 1), True),
    "dot_three_by_two": (dot_three_by_two, (rand(2, 3, 4), rand(4, 2)), (0, 1), True),
    "dot_scalar": (dot_scalar, (0.7, rand(3)), (0, 1), True),
    "outer_product": (outer_product, (rand(3), rand(4)), (0, 1), True),
    "outer_of_matrices": (outer_of_matrices, (rand(2, 2), rand(3)), (0, 1), True),
    "inner_vectors": (inner_vectors, (rand(4), rand(4)), (0, 1), True),
    "inner_matrices": (inner_matrices, (rand(2, 3), rand(4, 3)), (0, 1), True),
    "matmul_batched": (matmul_batched, (rand(2, 3, 4), rand(2, 4, 2)), (0, 1), True),
    "matmul_broadcast": (matmul_broadcast, (rand(3, 4), rand(2, 4, 2)), (0, 1), True),
    "matmul_vector_left": (matmul_vector_left, (rand(3), rand(2, 3, 4)), (0, 1), True),
    "matmul_vector_right": (matmul_vector_right, (rand(2, 3, 4), rand(4)), (0, 1), True),
    "einsum_matrix_product": (einsum_matrix_product, (rand(2, 3), rand(3, 4)), (0, 1), True),
    "einsum_trace": (einsum_trace, (rand(3, 3),), 0, True),
    "einsum_transpose": (einsum_transpose, (rand(2, 3),), 0, True),
    "einsum_batched": (einsum_batched, (rand(2, 3, 4), rand(2, 4, 2)), (0, 1), True),
    "einsum_ellipsis": (einsum_ellipsis, (rand(2, 3, 4), rand(4, 2)), (0, 1), True),
    "einsum_three_operands": (einsum_three_operands, (rand(3), rand(3, 4), rand(4)),
                              (0, 1, 2), True),
    "einsum_implicit": (einsum_implicit, (rand(2, 3), rand(3, 4)), (0, 1), True),
    "einsum_diagonal": (einsum_diagonal, (rand(3, 3),), 0, True),
    "einsum_sum_axis": (einsum_sum_axis, (rand(2, 3, 4),), 0, True),
    "tensordot_axes_int": (tensordot_axes_int, (rand(2, 3), rand(3, 4)), (0, 1), True),
    "tensordot_axes_pairs": (tensordot_axes_pairs, (rand(3, 4, 2), rand(2, 3, 5)), (0, 1), True),
    "max_of_equal_pair": (max_of_equal_pair, (0.6,), 0, True),
    "max_of_equal_grid": (max_of_equal_grid, (0.6,), 0, True),
    "min_three_way_tie": (min_three_way_tie, (rand(3),), 0, False),
    "maximum_of_itself": (maximum_of_itself, (rand(4),), 0, True),
    "minimum_of_itself": (minimum_of_itself, (rand(4),), 0, True),
    "max_along_axes": (max_along_axes, (rand(3, 4),), 0, True),
    "amax_keepdims_tie": (amax_keepdims_tie, (rand(3, 2),), 0, True),
    "max_over_two_axes": (max_over_two_axes, (rand(2, 3, 4),), 0, True),
    "where_with_ties": (where_with_ties, (rand(5), rand(5)), (0, 1), True),
    "clip_inside": (clip_inside, (rand(6),), 0, True),
    "maximum_broadcast": (maximum_broadcast, (rand(3, 1), rand(4)), (0, 1), True),
    "index_int": (index_int, (rand(5),), 0, True),
    "index_negative": (index_negative, (rand(5),), 0, True),
    "slice_reversed": (slice_reversed, (rand(5),), 0, True),
    "slice_negative_step": (slice_negative_step, (rand(7),), 0, True),
    "slice_2d_reversed": (slice_2d_reversed, (rand(4, 4),), 0, True),
    "index_list_repeats": (index_list_repeats, (rand(5),), 0, True),
    "index_columns": (index_columns, (rand(3, 4),), 0, True),
    "index_pairs": (index_pairs, (rand(3, 4),), 0, True),
    "index_bool_mask": (index_bool_mask, (rand(6),), 0, True),
    "index_constant_mask": (index_constant_mask, (rand(5),), 0, True),
    "index_ellipsis": (index_ellipsis, (rand(3, 4),), 0, True),
    "index_fanout": (index_fanout, (rand(5),), 0, True),
    "index_multiple_slices": (index_multiple_slices, (rand(4, 4),), 0, True),
    "index_then_dot": (index_then_dot, (rand(3, 4), rand(4, 3)), (0, 1), True),
    "reshape_method": (reshape_method, (rand(6),), 0, True),
    "reshape_call": (reshape_call, (rand(2, 3),), 0, True),
    "reshape_method_args": (reshape_method_args, (rand(2, 3),), 0, True),
    "ravel_and_flatten": (ravel_and_flatten, (rand(2, 3),), 0, True),
    "transpose_axes": (transpose_axes, (rand(2, 3, 4),), 0, True),
    "swap_and_move": (swap_and_move, (rand(2, 3, 4),), 0, True),
    "squeeze_expand": (squeeze_expand, (rand(4),), 0, True),
    "concatenate_lists": (concatenate_lists, (rand(3), rand(2)), (0, 1), True),
    "stack_axis": (stack_axis, (rand(3), rand(3)), (0, 1), True),
    "hstack_vstack": (hstack_vstack, (rand(3), rand(3)), (0, 1), True),
    "tile_and_repeat": (tile_and_repeat, (rand(3),), 0, True),
    "repeat_axis": (repeat_axis, (rand(2, 3),), 0, True),
    "kron_product": (kron_product, (rand(2, 2), rand(2, 3)), (0, 1), True),
    "diag_and_diagonal": (diag_and_diagonal, (rand(3), rand(3, 3)), (0, 1), True),
    "triangles": (triangles, (rand(3, 3),), 0, True),
    "flip_and_roll": (flip_and_roll, (rand(5),), 0, True),
    "rotate": (rotate, (rand(2, 3),), 0, True),
    "cumulative": (cumulative, (rand(4),), 0, True),
    "cumulative_axis": (cumulative_axis, (rand(2, 3),), 0, True),
    "product_all": (product_all, (rand(4),), 0, True),
    "product_axis": (product_axis, (rand(3, 2),), 0, True),
    "product_with_zero": (product_with_zero, (rand(4),), 0, True),
    "variance_ddof": (variance_ddof, (rand(4, 3),), 0, True),
    "mean_keepdims": (mean_keepdims, (rand(3, 4),), 0, True),
    "norms": (norms, (rand(4), rand(3, 4)), (0, 1), True),
    "sort_values": (sort_values, (rand(5),), 0, True),
    "pad_constant": (pad_constant, (rand(2, 3),), 0, True),
    "elementwise_menagerie": (elementwise_menagerie, (rand(5),), 0, True),
    "inverse_trig": (inverse_trig, (rand(5, low=-0.8, high=0.8),), 0, True),
    "binary_menagerie": (binary_menagerie, (rand(3, 1), rand(4)), (0, 1), True),
    "mod_and_remainder": (mod_and_remainder, (np.array([0.3, 1.25, -0.4]),
                                              np.array([0.75, 0.9, 1.1])), (0, 1), True),
    "negative_base_integer_power": (negative_base_integer_power,
                                    (np.array([-1.3, -0.6, 0.8, 1.4]),), 0, True),
    "nan_to_num_of_finite": (nan_to_num_of_finite, (rand(4),), 0, True),
    "atleast_2d_then_dot": (atleast_2d_then_dot, (rand(3),), 0, True),
    "comparisons_gate": (comparisons_gate, (rand(5), rand(5)), (0, 1), True),
    "singleton_output": (singleton_output, (rand(3, 3),), 0, True),
    "singleton_output_axis": (singleton_output_axis, (rand(3, 1),), 0, True),
    "identity": (identity, (0.4,), 0, True),
    "det_batched": (det_batched, (well_conditioned(3, (2,)),), 0, True),
    "slogdet_of_spd": (slogdet_of_spd, (spd(3),), 0, True),
    "inverse_batched": (inverse_batched, (well_conditioned(3, (2,)),), 0, True),
    "solve_batched_vector": (solve_batched_vector, (well_conditioned(3, (2,)), rand(2, 3)),
                             (0, 1), True),
    "solve_matrix": (solve_matrix, (well_conditioned(3), rand(3, 2)), (0, 1), True),
    "cholesky_of_spd": (cholesky_of_spd, (spd(3),), 0, True),
    "eigh_values": (eigh_values, (spd(3),), 0, True),
    "pinv_matrix": (pinv_matrix, (rand(3, 2),), 0, True),
    "matrix_power_two": (matrix_power_two, (rand(3, 3),), 0, True),
    "svd_values": (svd_values, (rand(3, 2),), 0, True),
    "mlp_dict": (mlp_dict, ({"W1": rand(3, 4), "b1": rand(4), "W2": rand(4, 2), "b2": rand(2)},
                            rand(5, 3)), (0, 1), False),
    "mlp_list_of_pairs": (mlp_list_of_pairs, ([(rand(3, 4), rand(4)), (rand(4, 2), rand(2))],
                                              rand(5, 3)), (0, 1), False),
    "tuple_of_arrays": (tuple_of_arrays, ((rand(3), rand(3)),), 0, False),
    "list_of_scalars": (list_of_scalars, ([0.3, -1.2, 0.8],), 0, False),
    "nested_structures": (nested_structures, ({"layers": [rand(2, 2), rand(3)],
                                               "scale": (0.5, 1.5)},), 0, False),
    "dict_items_loop": (dict_items_loop, ({"ab": rand(2), "c": rand(3)},), 0, False),
    "builtin_sum_of_array": (builtin_sum_of_array, (rand(3, 4),), 0, True),
    "builtin_sum_of_list": (builtin_sum_of_list, (rand(3), rand(3)), (0, 1), True),
    "builtin_abs_max_min": (builtin_abs_max_min, (0.4, 1.3), (0, 1), True),
    "builtin_max_of_list": (builtin_max_of_list, (rand(5),), 0, True),
    "builtin_pow_and_abs": (builtin_pow_and_abs, (rand(4),), 0, True),
    "builtin_len_mean": (builtin_len_mean, (rand(4),), 0, True),
    "math_functions": (math_functions, (0.7,), 0, True),
    "closure_scale": (closure_scale, (rand(3),), 0, True),
    "lambda_inside": (lambda_inside, (rand(3),), 0, True),
    "calls_default": (calls_default, (rand(3),), 0, True),
    "early_exit": (early_exit, (np.array([0.3, -0.5, 1.4, 0.2]),), 0, True),
    "early_return": (early_return, (np.array([0.3, -0.5, 1.4, 0.2]),), 0, True),
    "early_return_none": (early_return, (np.array([0.3, -0.5, 0.4, 0.2]),), 0, True),
    "while_counted": (while_counted, (rand(3),), 0, True),
    "while_on_data": (while_on_data, (rand(3),), 0, True),
    "reduce_product": (reduce_product, (np.array([1.2, -0.7, 0.9]),), 0, True),
    "continue_skips": (continue_skips, (rand(5),), 0, True),
    "hessian_vector_program": (hessian_vector_program, (rand(5), rand(5)), (0, 1), True),
    "value_and_grad_inside": (value_and_grad_inside, (0.4,), 0, True),
}

CASES.update({
    "chained_negative_slices": (chained_negative_slices, (rand(7),), 0, True),
    "out_of_range_negative_slice": (out_of_range_negative_slice, (rand(6),), 0, True),
    "reversed_rows_strided_columns": (reversed_rows_strided_columns, (rand(3, 4),), 0, True),
    "write_slices_of_buffer": (write_slices_of_buffer, (rand(6),), 0, True),
    "write_mask_of_buffer": (write_mask_of_buffer, (rand(6),), 0, True),
    "index_by_argmax": (index_by_argmax, (rand(5),), 0, True),
    "methods_everywhere": (methods_everywhere, (rand(3, 4),), 0, True),
    "sum_negative_axes": (sum_negative_axes, (rand(2, 3, 4),), 0, True),
    "einsum_corners": (einsum_corners, (rand(3), rand(2, 3)), (0, 1), True),
    "tensordot_outer_and_full": (tensordot_outer_and_full, (rand(2, 3), rand(2, 3)), (0, 1), True),
    "diff_and_average": (diff_and_average, (rand(4),), 0, True),
    "array_of_parts": (array_of_parts, (rand(3),), 0, True),
    "pow_broadcast_shapes": (pow_broadcast_shapes, (positive(3, 1), rand(1, 4)), (0, 1), True),
    "pow_broadcast_scalar": (pow_broadcast_shapes, (positive(3), 1.3), (0, 1), True),
    "floors_and_rounds": (floors_and_rounds, (np.array([0.33, -1.27, 2.41]),), 0, True),
    "third_derivative_program": (third_derivative_program, (0.4,), 0, True),
    "generator_sum": (generator_sum, (rand(4),), 0, True),
    "zip_enumerate": (zip_enumerate, (rand(4), rand(4)), (0, 1), True),
    "calls_keyword_only": (calls_keyword_only, (rand(2), rand(3)), (0, 1), True),
    "softmax_cross_entropy": (softmax_cross_entropy, (rand(4, 3), np.array([0, 2, 1, 2])), 0, True),
    "pairwise_distances": (pairwise_distances, (rand(4, 2),), 0, True),
    "rbf_kernel_quadratic": (rbf_kernel_quadratic, (rand(4, 2), rand(4)), (0, 1), True),
    "relu_and_leaky": (relu_and_leaky, (rand(6),), 0, True),
    "batch_norm": (batch_norm, (rand(5, 3), rand(3), rand(3)), (0, 1, 2), True),
    "convolve_by_loop": (convolve_by_loop, (rand(6), rand(3)), (0, 1), True),
    "eye_scaled": (eye_scaled, (rand(3),), 0, True),
    "cumulative_product_loop": (cumulative_product_loop, (rand(4),), 0, True),
    "eigh_vectors": (eigh_vectors, (spd(3),), 0, True),
    "take_and_take_along": (take_and_take_along, (rand(4), rand(3, 4)), (0, 1), True),
    "prod_two_zeros": (prod_two_zeros, (rand(4),), 0, True),
    "prod_axis_with_zero": (prod_axis_with_zero, (rand(3, 2),), 0, True),
    "cumprod_with_zero": (cumprod_with_zero, (rand(4),), 0, True),
    "while_with_break": (while_with_break, (rand(3),), 0, True),
    "loop_defaults_capture": (loop_defaults_capture, (rand(3),), 0, True),
    "closure_over_update": (closure_over_update, (rand(3),), 0, True),
    "all_positive_gate": (all_positive_gate, (rand(3),), 0, True),
    "det_small": (det_small, (well_conditioned(3),), 0, True),
    "solve_plain_vector": (solve_plain_vector, (well_conditioned(3), rand(3)), (0, 1), True),
    "solve_batched_matrix": (solve_batched_matrix, (well_conditioned(3, (2,)), rand(2, 3, 4)),
                             (0, 1), True),
    "matrix_chain": (matrix_chain, (rand(3, 3),), 0, True),
    "variance_keepdims": (variance_keepdims, (rand(3, 4),), 0, True),
    "mean_of_scalar_args": (mean_of_scalar_args, (0.7, -1.1), (0, 1), True),
    "one_hot_log_likelihood": (one_hot_log_likelihood, (rand(2, 3), rand(4, 2), np.array([0, 2, 1, 1])),
                               0, True),
})

CASES.update({
    "scale_slice_in_place": (scale_slice_in_place, (rand(3),), 0, True),
    "unpack_helper_pair": (unpack_helper_pair, (rand(3),), 0, True),
    "nested_array_display": (nested_array_display, (rand(2),), 0, True),
    "chained_comparison": (chained_comparison, (0.6,), 0, True),
    "chained_comparison_outside": (chained_comparison, (1.6,), 0, True),
    "scalar_abs_by_branch": (scalar_abs_by_branch, (-0.6,), 0, True),
    "logical_masks": (logical_masks, (np.array([-1.5, -0.5, 0.3, 1.1, 1.4]),), 0, True),
    "zero_d_array_argument": (zero_d_array_argument, (np.array(0.7),), 0, True),
    "keyword_argument_wrt": (keyword_argument_wrt, (rand(3), 0.5), "b", True),
    "broadcast_and_expand": (broadcast_and_expand, (rand(4),), 0, True),
    "outer_by_broadcasting": (outer_by_broadcasting, (rand(3),), 0, True),
    "column_major_by_transposes": (column_major_by_transposes, (rand(6),), 0, True),
    "transpose_all": (transpose_all, (rand(2, 3, 4),), 0, True),
    "concatenate_variants": (concatenate_variants, (rand(3), rand(3)), (0, 1), True),
    "max_two_way_ties": (max_two_way_ties, (rand(3),), 0, True),
    "maximum_at_equal_values": (maximum_at_equal_values, (np.array([0.5, -0.3, 1.2]),
                                                          np.array([0.5, 0.4, 1.2])), (0, 1), False),
    "abs_at_zero": (abs_at_zero, (np.array([0.0, 0.2, -0.7]),), 0, False),
    "mask_from_comparison_count": (mask_from_comparison_count, (rand(5),), 0, True),
    "integer_power_loop_early": (integer_power_loop_early, (rand(3, 3),), 0, True),
    "while_data_array_update": (while_data_array_update, (rand(3),), 0, True),
    "quadratic_form": (quadratic_form, (rand(3), rand(3, 3)), (0, 1), True),
    "log_det_via_cholesky": (log_det_via_cholesky, (spd(3),), 0, True),
    "gaussian_log_density": (gaussian_log_density, (rand(3), rand(3), rand(3, 3)), (0, 1, 2), True),
    "norm_regularised": (norm_regularised, (rand(3, 4),), 0, True),
    "vector_valued": (vector_valued, (rand(3),), 0, False),
    "hessian_target": (hessian_target, (rand(4),), 0, True),
})


def _binary_argument(shape):
    return float(RNG.uniform(-1.5, 1.5)) if shape is None else rand(*shape)


for _op in BINARY_OPS:
    for _shapes in BINARY_SHAPES:
        CASES[f"{_op.__name__}{_shapes}"] = (
            _op, tuple(_binary_argument(shape) for shape in _shapes), (0, 1), True)

GRAD_WITH_AUX = ad.grad(has_aux_target, has_aux=True)

CASES.update({
    "vocabulary": (vocabulary, (rand(3), rand(3, 3)), (0, 1), True),
    "einsum_more": (einsum_more, (rand(2, 3), rand(3, 2), rand(3)), (0, 1, 2), True),
    "dot_higher": (dot_higher, (rand(2, 3, 4), rand(3, 4, 2), rand(3)), (0, 1, 2), True),
    "linspace_and_full": (linspace_and_full, (0.3, 1.7), (0, 1), True),
    "mean_of_mask": (mean_of_mask, (rand(5),), 0, True),
    "aux_program": (aux_program, (rand(3),), 0, True),
})

CASES.update({
    "index_mixed_advanced": (index_mixed_advanced, (rand(5, 6, 4),), 0, True),
    "index_advanced_then_slice": (index_advanced_then_slice, (rand(3, 3, 4),), 0, True),
    "index_slices_fanout": (index_slices_fanout, (rand(5, 6, 4),), 0, True),
    "index_dot_slices": (index_dot_slices, (rand(4),), 0, True),
    "slice_of_slice": (slice_of_slice, (rand(7),), 0, True),
    "scalars_to_array": (scalars_to_array, (1.3,), 0, True),
    "array_from_scalar": (array_from_scalar, (1.3,), 0, True),
    "array_of_arrays_fanout": (array_of_arrays_fanout, (rand(3, 2),), 0, True),
    "assert_length": (assert_length, (rand(3, 2),), 0, True),
    "r_and_c": (r_and_c, (rand(3),), 0, True),
    "append_values": (append_values, (rand(3), 0.4), (0, 1), True),
    "trace_offsets": (trace_offsets, (rand(4, 5), rand(2, 3, 3, 2)), (0, 1), True),
    "diagonal_last_axes": (diagonal_last_axes, (rand(3, 4, 4),), 0, True),
    "int_cast_index": (int_cast_index, (np.concatenate([rand(5, 4), np.array([[1.5], [0.5], [4.5], [2.5], [1.5]])],
                                                       axis=1),), 0, True),
    "nan_to_num_constants": (nan_to_num_constants, (rand(4),), 0, True),
    "where_constant_mask": (where_constant_mask, (rand(2, 3), rand(2, 3)), (0, 1), True),
    "repeat_variants": (repeat_variants, (rand(2, 3),), 0, True),
    "tensordot_positional": (tensordot_positional, (1.2,), 0, True),
    "concatenate_positional_axis": (concatenate_positional_axis, (rand(2, 4, 2),), 0, True),
    "squeeze_forms": (squeeze_forms, (rand(3, 1, 2),), 0, True),
    "dot_with_floats": (dot_with_floats, (0.8, rand(3, 4)), (0, 1), True),
    "sum_of_pair_builtin": (sum_of_pair_builtin, (rand(3, 2), rand(3, 2)), (0, 1), True),
    "var_std_combos": (var_std_combos, (rand(1, 3), rand(3, 4)), (0, 1), True),
    "matrix_from_diagonal_batch": (matrix_from_diagonal_batch, (rand(3, 4),), 0, True),
})

CASES.update({
    "while_inside_for": (while_inside_for, (np.array([0.3, 0.9, 2.2]),), 0, True),
    "return_inside_while": (return_inside_while, (rand(3),), 0, True),
    "nested_break_continue": (nested_break_continue, (rand(4, 4),), 0, True),
    "buffer_loop_reads_previous": (buffer_loop_reads_previous, (rand(5),), 0, True),
    "buffer_rows_in_place_add": (buffer_rows_in_place_add, (rand(5, 3),), 0, True),
    "accumulate_in_list_then_stack": (accumulate_in_list_then_stack, (rand(3),), 0, True),
    "loop_over_rows_with_index": (loop_over_rows_with_index, (rand(3, 2), rand(2)), (0, 1), True),
    "reversed_range_loop": (reversed_range_loop, (rand(3), 3), 0, True),
    "data_dependent_branch_in_loop": (data_dependent_branch_in_loop, (rand(3),), 0, True),
    "nested_function_closure_loop": (nested_function_closure_loop, (rand(3),), 0, True),
    "recursive_style_unrolled": (recursive_style_unrolled, (rand(3),), 0, True),
    "min_over_loop": (min_over_loop, (np.array([0.4, -0.3, 0.9, -1.1, 0.2]),), 0, True),
    "python_max_over_loop": (python_max_over_loop, (np.array([0.4, -0.3, 0.9, -1.1, 0.2]),), 0, True),
    "counter_driven_while": (counter_driven_while, (rand(4), 3), 0, True),
})

CASES.update({
    "gather_by_argument": (gather_by_argument, (rand(5), np.array([4, 0, 4, 2, 0])), 0, True),
    "mask_by_argument": (mask_by_argument, (rand(4), np.array([True, False, True, True])), 0, True),
    "runtime_slice_bounds": (runtime_slice_bounds, (rand(6), 1, 4), 0, True),
    "runtime_step": (runtime_step, (rand(7), 2), 0, True),
    "negative_int_argument": (negative_int_argument, (rand(5), -1), 0, True),
    "rows_by_argument": (rows_by_argument, (rand(4, 3), np.array([2, 2, 0])), 0, True),
    "gather_columns_loop": (gather_columns_loop, (rand(3, 4), [1, 3, 1]), 0, True),
})

if scipy is not None:
    CASES.update({
        "special_functions": (special_functions, (positive(4),), 0, True),
        "logsumexp_axis": (logsumexp_axis, (rand(3, 4),), 0, True),
        "logsumexp_weights": (logsumexp_weights, (rand(3),), 0, True),
        "more_special": (more_special, (RNG.uniform(0.2, 0.8, size=4),), 0, True),
        "softmax_special": (softmax_special, (rand(2, 3),), 0, True),
    })


@pytest.mark.parametrize("name", list(CASES))
def test_peer_program(name):
    f, args, wrt, second = CASES[name]
    ad.check_grad(f, *args, wrt=wrt, rtol=1e-5, atol=1e-7)
    if second:
        gradients = ad.grad(f, wrt=wrt)(*args)
        gradients = gradients if isinstance(wrt, tuple) else (gradients,)
        check_second_order(f, list(args), wrt, gradients)


def ragged_halves(x):
    left, right = np.array_split(x, [2])
    return np.sum(left) * np.sum(right)


def test_pieces_of_a_list_have_shapes_of_their_own():
    """np.array_split's pieces are items of one list, of different shapes: the compiler
    must not take them (nor the items of any other list read by position) to share one."""
    graph = ad.jvp(ragged_halves).original_graph
    pieces = [node.out for node in graph.nodes if node.op.name == "list_getitem"]
    assert len(pieces) == 2
    assert pieces[0].shape is not pieces[1].shape
    value, derivative = ad.jvp(ragged_halves)(np.arange(5.0), np.ones(5))
    assert value == ragged_halves(np.arange(5.0))
    np.testing.assert_allclose(derivative, 9.0 * 2 + 1.0 * 3)  # sum(right) * 2 + sum(left) * 3


def test_jacobian_and_hessian_match_finite_differences():
    """ad.jacobian of a vector function, column by column, and ad.hessian of a scalar
    one, against central differences of the function and of its checked gradient."""
    x = rand(3)
    columns = [ad.numeric_grad(lambda v, i=i: vector_valued(v)[i], x) for i in range(3)]
    np.testing.assert_allclose(ad.jacobian(vector_valued)(x), np.stack(columns),
                               rtol=1e-6, atol=1e-8)
    y = rand(4)
    gradient = ad.grad(hessian_target)
    rows = [ad.numeric_grad(lambda v, i=i: gradient(v)[i], y) for i in range(4)]
    np.testing.assert_allclose(ad.hessian(hessian_target)(y), np.stack(rows), rtol=1e-6, atol=1e-8)
