def rosenbrock_grad_hvp(x, v):
    if type(x) not in array_kinds or type(v) not in array_kinds:
        return by_structure(x, v)
    try:
        # line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t1 = x[1:]
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t2 = v[1:]
        # line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t3 = x[:-1]
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t4 = v[:-1]
        # line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t5 = t3 ** 2
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t6 = t4 * 2
        t7 = t6 * t3
        del t6
        # line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t8 = t1 - t5
        del t1, t5
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t9 = -t7
        del t7
        t10 = t2 + t9
        del t2, t9
        # line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t11 = 1.0 - t3
        # grad of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        dt3 = t11 * -2.0
        del t11
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t12 = t4 * 2.0
        # grad of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        dt8 = 200.0 * t8
        del t8
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t13 = 200.0 * t10
        del t10
        # grad of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t14 = dt8 * -2
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t15 = t13 * -2
        # grad of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        dt3_1 = t14 * t3
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t16 = t15 * t3
        del t15, t3
        t17 = t14 * t4
        del t14, t4
        t18 = t16 + t17
        del t16, t17
        # grad of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        dt3 += dt3_1
        del dt3_1
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t19 = t12 + t18
        del t12, t18
        # grad of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t20 = adjoint_dtype(dt3, x)
        dx = np.zeros_like(x, dtype=t20)
        dx[:-1] += dt3
        del dt3
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t21 = adjoint_dtype(t19, dx)
        t22 = np.zeros_like(dx, dtype=t21)
        t22[:-1] += t19
        del t19
        # grad of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        dx[1:] += dt8
        del dt8
        # tangent of line 17: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        t23 = adjoint_dtype(t13, dx)
        t24 = np.zeros_like(dx, dtype=t23)
        del dx
        t24[1:] += t13
        del t13
        t25 = t22 + t24
        del t22, t24
        if t25.__class__ is not float or x.__class__ is not float:
            t25 = as_gradient_of(t25, x)
        return t25
    except Exception as error:
        raise at_user_line(error)
