def rnn_jvp(W, U, xs, h, tangent):
    if (type(W) not in array_kinds or type(U) not in array_kinds or
            type(xs) not in array_kinds or type(h) not in array_kinds or
            type(tangent) not in array_kinds):
        return by_structure(W, U, xs, h, tangent)
    try:
        # line 54: for t in range(xs.shape[0]):
        t1 = np.shape(xs)
        t2 = t1[0]
        # tangent of line 54: for t in range(xs.shape[0]):
        t3 = zero_tangent(h)
        # line 54: for t in range(xs.shape[0]):
        for t in range(t2):
            # line 55: h = np.tanh(W @ h + U @ xs[t])
            t4 = W @ h
            # tangent of line 55: h = np.tanh(W @ h + U @ xs[t])
            t5 = tangent @ h
            t6 = W @ t3
            t7 = t5 + t6
            del t5, t6
            # line 55: h = np.tanh(W @ h + U @ xs[t])
            t8 = xs[t]
            t9 = U @ t8
            del t8
            t10 = t4 + t9
            del t4, t9
            # tangent of line 55: h = np.tanh(W @ h + U @ xs[t])
            t11 = broadcast_like(t7, t10)
            del t7
            # line 55: h = np.tanh(W @ h + U @ xs[t])
            h = np.tanh(t10)
            del t10
            # tangent of line 55: h = np.tanh(W @ h + U @ xs[t])
            t12 = h * h
            t13 = 1 - t12
            del t12
            t3 = t11 * t13
            del t11, t13
        del t2
        # line 56: return np.sum(h)
        t14 = np.sum(h)
        # tangent of line 56: return np.sum(h)
        t15 = np.sum(t3)
        del t3
        return t14, t15
    except Exception as error:
        raise at_user_line(error)
