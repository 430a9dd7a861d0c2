def robust_solve_jvp(A, b, tangent):
    if (type(A) not in array_kinds or type(b) not in array_kinds or
            type(tangent) not in array_kinds or complex_values(A, b, tangent)):
        return by_structure(A, b, tangent)
    try:
        A_dot = tangent[0]
        b_dot = tangent[1]
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
        # tangent of line 96: try:
        if caught == 0:
            # tangent of line 97: L = np.linalg.cholesky(A)
            t4 = np.shape(A)
            n = t4[-1]
            inverse = np.linalg.inv(L)
            t5 = linalg.np.tri(n, k=-1)
            outside = A_dot * t5
            del t5
            t6 = np.eye(n)
            t7 = A_dot * t6
            t8 = t7 + outside
            del t7
            t9 = np.swapaxes(outside, -1, -2)
            del outside
            t10 = t8 + t9
            del t8, t9
            t11 = inverse @ t10
            del t10
            t12 = np.swapaxes(inverse, -1, -2)
            del inverse
            inner = t11 @ t12
            del t11, t12
            t13 = linalg.np.tri(n)
            t14 = np.eye(n)
            del n
            t15 = 0.5 * t14
            t16 = t13 - t15
            del t13, t15
            t17 = inner * t16
            del inner, t16
            L_dot = L @ t17
            del t17
            # tangent of line 98: x = np.linalg.solve(L.T, np.linalg.solve(L, b))
            t18 = L_dot.T
            t19 = solve_tangent(L_dot, t2, L, b)
            del L_dot
            t20 = np.linalg.solve(L, b_dot)
            t21 = t19 + t20
            del t19, t20
            t22 = solve_tangent(t18, x, t1, t2)
            del t18
            t23 = np.linalg.solve(t1, t21)
            del t21
            x_dot = t22 + t23
            del t22, t23
        else:
            # tangent of line 100: x = np.linalg.lstsq(A, b, rcond=None)[0]
            p = np.linalg.pinv(A)
            pt = np.swapaxes(p, -1, -2)
            tt = np.swapaxes(A_dot, -1, -2)
            t24 = p @ A_dot
            t25 = t24 @ p
            del t24
            t26 = -t25
            del t25
            t27 = p @ pt
            t28 = tt @ A
            t29 = t28 @ p
            del t28
            t30 = tt - t29
            del t29
            t31 = t27 @ t30
            del t27, t30
            t32 = t26 + t31
            del t26, t31
            t33 = A @ tt
            t34 = p @ t33
            del t33
            t35 = tt - t34
            del t34, tt
            t36 = t35 @ pt
            del pt, t35
            t37 = t36 @ p
            del t36
            t38 = t32 + t37
            del t32, t37
            t39 = np.ndim(b)
            t40 = t39 == 1
            if t40:
                result = np.expand_dims(b, -1)
            else:
                result = b
            t41 = t38 @ result
            del result, t38
            if t40:
                result = t41[..., 0]
            else:
                result = t41
            del t41
            t42 = p @ b_dot
            del p
            x_dot = result + t42
            del result, t42
        del A_dot, b_dot
        # line 101: return np.sum(x ** 2)
        t43 = x ** 2
        # tangent of line 101: return np.sum(x ** 2)
        t44 = x_dot * 2
        del x_dot
        t45 = t44 * x
        del t44, x
        # line 101: return np.sum(x ** 2)
        t46 = np.sum(t43)
        del t43
        # tangent of line 101: return np.sum(x ** 2)
        t47 = np.sum(t45)
        del t45
        return t46, t47
    except Exception as error:
        raise at_user_line(error)
