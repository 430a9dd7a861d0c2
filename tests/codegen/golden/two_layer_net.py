def two_layer_net_grad(x, W1, b1, W2, b2, t):
    if (type(x) not in array_kinds or type(W1) not in array_kinds or
            type(b1) not in array_kinds or type(W2) not in array_kinds or
            type(b2) not in array_kinds or type(t) not in array_kinds):
        return by_structure(x, W1, b1, W2, b2, t)
    try:
        # line 11: h = np.tanh(x @ W1 + b1)
        t1 = x @ W1
        t2 = t1 + b1
        h = np.tanh(t2)
        del t2
        # line 12: y = h @ W2 + b2
        t3 = h @ W2
        y = t3 + b2
        # line 13: return np.mean((y - t) ** 2)
        t4 = y - t
        # grad of line 13: return np.mean((y - t) ** 2)
        t5 = np.size(t4)
        t6 = 1.0 / t5
        t7 = t6 * 2
        dt4 = t7 * t4
        del t4
        dy = unbroadcast(dt4, y)
        del dt4, y
        # grad of line 12: y = h @ W2 + b2
        dt3 = unbroadcast(dy, t3)
        del t3
        db2 = unbroadcast(dy, b2)
        del dy
        dh = matmul_grad_lhs(dt3, h, W2)
        dW2 = matmul_grad_rhs(dt3, h, W2)
        del dt3
        # grad of line 11: h = np.tanh(x @ W1 + b1)
        t8 = h * h
        del h
        t9 = 1 - t8
        del t8
        dt2 = dh * t9
        del dh, t9
        dt1 = unbroadcast(dt2, t1)
        del t1
        db1 = unbroadcast(dt2, b1)
        del dt2
        dW1 = matmul_grad_rhs(dt1, x, W1)
        del dt1
        # the gradients, with the shapes and dtypes of the arguments
        if dW1.__class__ is not float or W1.__class__ is not float:
            dW1 = as_gradient_of(dW1, W1)
        if db1.__class__ is not float or b1.__class__ is not float:
            db1 = as_gradient_of(db1, b1)
        if dW2.__class__ is not float or W2.__class__ is not float:
            dW2 = as_gradient_of(dW2, W2)
        if db2.__class__ is not float or b2.__class__ is not float:
            db2 = as_gradient_of(db2, b2)
        return dW1, db1, dW2, db2
    except Exception as error:
        raise at_user_line(error)
