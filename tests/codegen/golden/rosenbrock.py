def rosenbrock_grad(x):
    # line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    t1 = x[1:]
    t2 = x[:-1]
    t3 = t2 ** 2
    t4 = t1 - t3
    t5 = t4 ** 2
    t6 = 100.0 * t5
    t7 = 1.0 - t2
    t8 = t7 ** 2
    t9 = t6 + t8
    # grad of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    t10 = np.shape(t9)
    dt9 = np.broadcast_to(1.0, t10)
    dt6 = unbroadcast(dt9, t6)
    dt8 = unbroadcast(dt9, t8)
    t11 = dt8 * 2
    dt7 = t11 * t7
    dt2 = -dt7
    dt5 = dt6 * 100.0
    t12 = dt5 * 2
    dt4 = t12 * t4
    dt1 = unbroadcast(dt4, t1)
    t13 = -dt4
    dt3 = unbroadcast(t13, t3)
    t14 = dt3 * 2
    dt2_1 = t14 * t2
    dt2 = dt2 + dt2_1
    t15 = np.result_type(dt2)
    dx = np.zeros_like(x, dtype=t15)
    dx[:-1] += dt2
    # the gradients, with the shapes and dtypes of the arguments
    dx[1:] += dt1
    if dx.__class__ is not float or x.__class__ is not float:
        dx = as_gradient_of(dx, x)
    return dx
