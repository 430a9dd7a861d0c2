def doubling_vjp(x, seed=None):
    if type(x) not in array_kinds or type(seed) not in array_kinds:
        return by_structure(x, seed)
    try:
        # line 66: y = 2.0 * x
        y = 2.0 * x
        # line 67: while np.linalg.norm(y) < 1000.0:
        count = 0
        while np.linalg.norm(y) < 1000.0:
            # line 68: y = 2.0 * y
            y = 2.0 * y
            # line 67: while np.linalg.norm(y) < 1000.0:
            count = count + 1
        # line 69: return np.sum(y * y)
        t3 = y * y
        t4 = np.sum(t3)
        del t3
        # grad of line 69: return np.sum(y * y)
        dt4 = vjp_seed(seed, t4, 'corpus.py:69')
        dy = dt4 * y
        del y
        dy = dy * 2
        # grad of line 67: while np.linalg.norm(y) < 1000.0:
        for _ in range(count):
            # grad of line 68: y = 2.0 * y
            dy = dy * 2.0
        # grad of line 66: y = 2.0 * x
        dx = dy * 2.0
        del dy
        # the gradients, with the shapes and dtypes of the arguments
        if dx.__class__ is not float or x.__class__ is not float:
            dx = as_gradient_of(dx, x, complex_values=True)
        return dx
    except Exception as error:
        raise at_user_line(error)
