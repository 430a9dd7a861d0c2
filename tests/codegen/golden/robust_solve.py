def robust_solve_grad(A, b):
    if type(A) not in array_kinds or type(b) not in array_kinds or complex_values(A, b):
        return by_structure(A, b)
    try:
        # line 96: try:
        try:
            # line 97: L = np.linalg.cholesky(A)
            L = np.linalg.cholesky(A)
            # line 98: x = np.linalg.solve(L.T, np.linalg.solve(L, b))
            t1 = L.T
            t2 = np.linalg.solve(L, b)
            x = np.linalg.solve(t1, t2)
            caught = 0
        except np.linalg.LinAlgError:
            # line 100: x = np.linalg.lstsq(A, b, rcond=None)[0]
            t3 = np.linalg.lstsq(A, b)
            x_1 = t3[0]
            x, caught = x_1, 1
        # grad of line 101: return np.sum(x ** 2)
        dx = 2.0 * x
        # grad of line 96: try:
        if caught == 0:
            # grad of line 98: x = np.linalg.solve(L.T, np.linalg.solve(L, b))
            t4 = solve_grads(dx, x, t1, t2)
            dt1 = t4[0]
            dt2 = t4[1]
            del t4
            t5 = solve_grads(dt2, t2, L, b)
            del dt2
            dL = t5[0]
            db = t5[1]
            del t5
            dL_1 = dt1.T
            del dt1
            dL = dL + dL_1
            del dL_1
            # grad of line 97: L = np.linalg.cholesky(A)
            t6 = np.shape(A)
            n = t6[-1]
            inverse = np.linalg.inv(L)
            t7 = np.swapaxes(L, -1, -2)
            t8 = t7 @ dL
            del dL, t7
            t9 = linalg.np.tri(n)
            t10 = np.eye(n)
            del n
            t11 = 0.5 * t10
            t12 = t9 - t11
            del t11, t9
            inner = t8 * t12
            del t12, t8
            t13 = np.swapaxes(inverse, -1, -2)
            t14 = t13 @ inner
            del inner, t13
            t15 = t14 @ inverse
            del inverse, t14
            t16 = np.shape(t15)
            n = t16[-1]
            t17 = linalg.np.tri(n)
            t18 = t15 * t17
            del t17
            t19 = np.swapaxes(t15, -1, -2)
            del t15
            t20 = linalg.np.tri(n, k=-1)
            del n
            t21 = t19 * t20
            del t19, t20
            dA = t18 + t21
            del t18, t21
        else:
            # grad of line 100: x = np.linalg.lstsq(A, b, rcond=None)[0]
            p = np.linalg.pinv(A)
            t22 = np.ndim(b)
            t23 = t22 == 1
            if t23:
                result = np.expand_dims(dx, -1)
            else:
                result = dx
            if t23:
                result_1 = np.expand_dims(b, -1)
            else:
                result_1 = b
            t24 = np.swapaxes(result_1, -1, -2)
            del result_1
            gp = result @ t24
            del result, t24
            pt = np.swapaxes(p, -1, -2)
            gt = np.swapaxes(gp, -1, -2)
            t25 = pt @ gp
            del gp
            t26 = t25 @ pt
            del t25
            t27 = -t26
            del t26
            t28 = p @ gt
            t29 = A @ t28
            del t28
            t30 = gt - t29
            del t29
            t31 = t30 @ p
            del t30
            t32 = t31 @ pt
            del t31
            t33 = t27 + t32
            del t27, t32
            t34 = pt @ p
            t35 = gt @ p
            del p
            t36 = t35 @ A
            del t35
            t37 = gt - t36
            del gt, t36
            t38 = t34 @ t37
            del t34, t37
            dA = t33 + t38
            del t33, t38
            if t23:
                result = np.expand_dims(dx, -1)
            else:
                result = dx
            t39 = pt @ result
            del pt, result
            if t23:
                db = t39[..., 0]
            else:
                db = t39
            del t39
        del dx
        # the gradients, with the shapes and dtypes of the arguments
        if dA.__class__ is not float or A.__class__ is not float:
            dA = as_gradient_of(dA, A)
        if db.__class__ is not float or b.__class__ is not float:
            db = as_gradient_of(db, b)
        return dA, db
    except Exception as error:
        raise at_user_line(error)
