"""Statistics of samples: ``np.cov``, ``np.corrcoef`` and ``np.bincount``'s weighted counts.

``np.cov`` and ``np.corrcoef`` are built, while compiling, from the ops NumPy's own
code computes with (``average``, ``@``, ``diagonal``, ``sqrt``, ...), so they take
those ops' rules in both modes and to every order, and their SymPy forms. Only
the layout of the variables (rows, or columns with ``rowvar=False``) is an op of
its own, ``cov_rows``, linear in the sample. ``np.bincount`` sums its weights per
bin: linear in the weights, whose adjoint is the result's adjoint read at each
element's bin.

>>> import numpy as np
>>> cov_rows(np.ones((3, 2)), False, False).shape
(2, 3)
"""

from __future__ import annotations

import numpy as np

from autodiff.graph.ir import Const
from autodiff.graph.patterns import is_none
from autodiff.ops.registry import OPS, defop, helper_op
from autodiff.ops.shape_rules import shape_like
from autodiff.ops.sympy_forms import objects

# NumPy 2.4 reads a 2-D m with rowvar=False by its columns even when it has one row;
# earlier NumPy read such an m (and reads y still) as one variable.
with np.errstate(all="ignore"):
    _ONE_ROW_BY_COLUMNS = np.cov(np.ones((1, 3)), rowvar=False, bias=True).shape == (3, 3)


def _by_columns(m, rowvar, second) -> bool:
    if rowvar or np.ndim(m) < 2:
        return False
    return (_ONE_ROW_BY_COLUMNS and not second) or np.shape(m)[0] != 1


def cov_rows(m, rowvar, second):
    """The 2-D array of variables (rows) by observations that np.cov reads its sample
    ``m`` (``second``: its y) as, in float64 (or wider) as NumPy computes it: a 1-D
    ``m`` is one variable, and with ``rowvar`` false the columns are the variables.

    >>> cov_rows(np.arange(3), True, False).tolist()
    [[0.0, 1.0, 2.0]]
    """
    rows = np.atleast_2d(np.asarray(m, dtype=np.result_type(m, np.float64)))
    return rows.T if _by_columns(m, rowvar, second) else rows


def cov_rows_transpose(g, m, rowvar, second):
    """The transpose of :func:`cov_rows`: ``g``, of its result's shape, back in ``m``'s.

    >>> cov_rows_transpose(np.ones((2, 3)), np.ones((3, 2)), False, False).shape
    (3, 2)
    """
    return np.reshape(np.transpose(g) if _by_columns(m, rowvar, second) else g, np.shape(m))


_HELPER = "a helper of derivatives: user code never calls it"
cov_rows_op = helper_op(cov_rows, diff=("m",), jvp="linear", fresh=False, floating="always",
                        sympy=lambda m, rowvar, second: cov_rows(objects(m), rowvar, second))
cov_rows_transpose_op = helper_op(cov_rows_transpose, diff=("g",), jvp="linear", fresh=False,
                                  shape=shape_like("m"), shape_params=("m",), no_sympy=_HELPER)


@cov_rows_op.defvjp
def _(g, ans, m, rowvar, second):
    return cov_rows_transpose(g, m, rowvar, second)


@cov_rows_transpose_op.defvjp
def _(gg, ans, g, m, rowvar, second):
    return cov_rows(gg, rowvar, second)


# ----- np.cov and np.corrcoef -----
#
# As NumPy computes them: the variables' rows X (m's, then y's), centred on their
# (weighted) means, c = (X - avg) * w @ conj(X - avg).T / fact, with NumPy's divisor fact
# for ddof and the weights (w is fweights * aweights, either alone, or none). The
# result is squeezed (one variable gives a number). corrcoef divides c by the standard
# deviations on its diagonal, on both sides, and clips to [-1, 1] as NumPy does (the
# diagonal is 1 whatever the sample, so its derivative is 0 there).


def _constant(operand):
    return isinstance(operand, Const) and operand.path is None


def _covariance(builder, named):
    """The 2-D covariance matrix np.cov computes before squeezing, or None for a call
    with settings known only when the code runs (or a dtype)."""
    settings = [named[name] for name in ("rowvar", "bias", "ddof", "dtype")]
    if not all(_constant(s) for s in settings) or settings[3].value is not None:
        return None
    rowvar, bias, ddof = (s.value for s in settings[:3])
    emit = builder.emit
    rows = emit(cov_rows_op, (named["m"], Const(rowvar), Const(False)))
    if "y" in named and not is_none(named["y"]):
        more = emit(cov_rows_op, (named["y"], Const(rowvar), Const(True)))
        rows = emit(OPS["concatenate"], ((rows, more), Const(0)))
    ddof = (0 if bias else 1) if ddof is None else ddof
    frequencies, analytic = named.get("fweights", Const(None)), named.get("aweights", Const(None))
    if is_none(frequencies) and is_none(analytic):
        centred = emit(OPS["subtract"], (rows, emit(OPS["mean"], (rows, Const(1), Const(True)))))
        count = emit(OPS["getitem"], (emit(OPS["shape"], (rows,)), Const(1)))
        fact = emit(OPS["subtract"], (count, Const(ddof)))
        weighted = centred
    else:
        weights = (analytic if is_none(frequencies) else frequencies if is_none(analytic)
                   else emit(OPS["multiply"], (frequencies, analytic)))
        average = emit(OPS["average"], (rows, Const(1), weights, Const(True)))
        centred = emit(OPS["subtract"], (rows, average))
        total = emit(OPS["sum"], (weights, Const(None), Const(False)))
        if ddof == 0:
            fact = total
        elif is_none(analytic):
            fact = emit(OPS["subtract"], (total, Const(ddof)))
        else:
            spread = emit(OPS["sum"], (emit(OPS["multiply"], (weights, analytic)), Const(None),
                                       Const(False)))
            correction = emit(OPS["divide"], (emit(OPS["multiply"], (Const(ddof), spread)), total))
            fact = emit(OPS["subtract"], (total, correction))
        weighted = emit(OPS["multiply"], (centred, weights))
    transposed = emit(OPS["conj"], (emit(OPS["swapaxes"], (centred, Const(0), Const(1))),))
    product = emit(OPS["matmul"], (weighted, transposed))
    return emit(OPS["divide"], (product, fact))


def _cov_form(named, builder):
    matrix = _covariance(builder, named)
    return None if matrix is None else builder.emit(OPS["squeeze"], (matrix, Const(None)))


_SETTINGS = ("{} is differentiated with constant rowvar, bias and ddof and no dtype (it is "
             "built from the ops NumPy computes it with)")


@defop("cov", "np.cov(m, y, rowvar=rowvar, bias=bias, ddof=ddof, fweights=fweights, "
       "aweights=aweights, dtype=dtype)", aliases=(np.cov,), diff=("m", "y", "aweights"),
       floating="always", simplify=_cov_form, no_gradient=_SETTINGS.format("np.cov"),
       no_sympy="built from average, matmul and the ops NumPy computes it with")
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None): ...


def _corrcoef_form(named, builder):
    matrix = _covariance(builder, {**named, "bias": Const(False), "ddof": Const(None)})
    if matrix is None:
        return None
    emit = builder.emit
    # NumPy clips complex coefficients part by part, and these ops as a whole: real ones only
    samples = tuple(named[n] for n in ("m", "y") if n in named and not is_none(named[n]))
    emit(OPS["real_operands"], (samples, Const("np.corrcoef")))
    deviations = emit(OPS["sqrt"], (emit(OPS["diagonal"], (matrix, Const(0), Const(0),
                                                            Const(1))),))
    scaled = emit(OPS["divide"], (matrix, emit(OPS["expand_dims"], (deviations, Const(1)))))
    scaled = emit(OPS["divide"], (scaled, emit(OPS["expand_dims"], (deviations, Const(0)))))
    clipped = emit(OPS["clip"], (scaled, Const(-1), Const(1)))
    return emit(OPS["squeeze"], (clipped, Const(None)))


@defop("corrcoef", "np.corrcoef(x, y, rowvar=rowvar, dtype=dtype)", aliases=(np.corrcoef,),
       diff=("x", "y"), floating="always", simplify=lambda named, builder: _corrcoef_form(
           {"m": named["x"], **named}, builder),
       no_gradient=_SETTINGS.format("np.corrcoef").replace(", bias and ddof", ""),
       no_sympy="built from np.cov's ops, diagonal and sqrt")
def corrcoef(x, y=None, rowvar=True, *, dtype=None): ...


# ----- np.bincount -----


def _sympy_bincount(x, weights, minlength):
    bins = np.asarray(x).astype(int)
    length = max(int(bins.max(initial=-1)) + 1, minlength)
    if weights is None:
        return np.bincount(bins, minlength=minlength)
    out = np.zeros(length, dtype=object)
    for position, total in zip(bins.ravel(), objects(weights).ravel()):
        out[position] = out[position] + total
    return out


# result[k] sums the weights of the elements in bin k: each weight's adjoint is the
# result's adjoint at its bin, g[x]. The bins are integers, with no gradient.
@defop("bincount", "np.bincount(x, weights=weights, minlength=minlength)", aliases=(np.bincount,),
       diff=("weights",), jvp="linear", sympy=_sympy_bincount,
       no_gradient="its bins x are integers")
def bincount(x, weights=None, minlength=0): ...


bincount.values_decide_shape = True  # the largest bin decides its length


@bincount.defvjp
def _(g, ans, x, weights, minlength):
    return g[x]
