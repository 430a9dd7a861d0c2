def rosenbrock_grad(x):
    if type(x) not in array_kinds:
        return by_structure(x)
    try:
        # line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t1 = x[1:]
        t2 = x[:-1]
        t3 = t2 ** 2
        t4 = t1 - t3
        del t1, t3
        t5 = 1.0 - t2
        # grad of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        dt2 = t5 * -2.0
        del t5
        dt4 = 200.0 * t4
        del t4
        t6 = dt4 * -2
        dt2_1 = t6 * t2
        del t2, t6
        dt2 += dt2_1
        del dt2_1
        t7 = adjoint_dtype(dt2, x)
        dx = np.zeros_like(x, dtype=t7)
        dx[:-1] += dt2
        del dt2
        dx[1:] += dt4
        del dt4
        # the gradients, with the shapes and dtypes of the arguments
        if dx.__class__ is not float or x.__class__ is not float:
            dx = as_gradient_of(dx, x)
        return dx
    except Exception as error:
        raise at_user_line(error)
