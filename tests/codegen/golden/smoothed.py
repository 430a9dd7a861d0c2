def smoothed_grad(x):
    if type(x) not in array_kinds:
        return by_structure(x)
    try:
        shape_stack = []
        shape_stack_1 = []
        # line 73: out = np.zeros_like(x)
        out = np.zeros_like(x)
        # line 74: out[0] = x[0]
        t1 = x[0]
        out[0] = t1
        del t1
        # line 75: for i in range(1, len(x)):
        t2 = len(x)
        for i in range(1, t2):
            # line 76: out[i] = 0.5 * out[i - 1] + x[i]
            t3 = i - 1
            t4 = out[t3]
            t5 = 0.5 * t4
            shape = shape_of(t4)
            del t4
            shape_stack.append(shape)
            t6 = x[i]
            t7 = t5 + t6
            del t5, t6
            shape = shape_of(t7)
            shape_stack_1.append(shape)
            out[i] = t7
            del t7
        # grad of line 77: return np.sum(out ** 2)
        dout = 2.0 * out
        del out
        # grad of line 76: out[i] = 0.5 * out[i - 1] + x[i]
        dx = zero_adjoint(x)
        # grad of line 75: for i in range(1, len(x)):
        for i in reversed(range(1, t2)):
            # grad of line 76: out[i] = 0.5 * out[i - 1] + x[i]
            t8 = i - 1
            shape = shape_stack_1.pop()
            shape_1 = shape_stack.pop()
            t9 = x[i]
            shape_2 = shape_of(t9)
            del t9
            t10 = dout[i]
            t11 = np.copy(t10)
            del t10
            dt7 = unbroadcast_to(t11, shape)
            del shape, t11
            dout[i] = 0
            dt5 = unbroadcast_to(dt7, shape_1)
            del shape_1
            dt6 = unbroadcast_to(dt7, shape_2)
            del dt7
            dt4 = dt5 * 0.5
            del dt5
            dout[t8] += dt4
            del dt4
            dx[i] += dt6
            del dt6
        # grad of line 74: out[0] = x[0]
        t12 = dout[0]
        del dout
        dt1 = np.copy(t12)
        del t12
        dx[0] += dt1
        del dt1
        # the gradients, with the shapes and dtypes of the arguments
        if dx.__class__ is not float or x.__class__ is not float:
            dx = as_gradient_of(dx, x)
        return dx
    except Exception as error:
        raise at_user_line(error)
