def polynomial_grad(x):
    if type(x) not in array_kinds:
        return by_structure(x)
    try:
        # grad of line 21: return 3.0 * x ** 3 + 2.0 * x ** 2 - 5.0 * x + 1.0
        dx = 4.0 * x
        dx = dx - 5.0
        t1 = x * x
        dx_1 = 9.0 * t1
        del t1
        dx = dx + dx_1
        del dx_1
        # the gradients, with the shapes and dtypes of the arguments
        if x.__class__ is not float:
            dx = as_gradient_of(dx, x, where='corpus.py:21')
        return dx
    except Exception as error:
        raise at_user_line(error)
