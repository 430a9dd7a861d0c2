def two_layer_net_jvp(x, W1, b1, W2, b2, t, tangent):
    if (type(x) not in array_kinds or type(W1) not in array_kinds or
            type(b1) not in array_kinds or type(W2) not in array_kinds or
            type(b2) not in array_kinds or type(t) not in array_kinds or
            type(tangent) not in array_kinds):
        return by_structure(x, W1, b1, W2, b2, t, tangent)
    try:
        W1_dot = tangent[0]
        b1_dot = tangent[1]
        # line 11: h = np.tanh(x @ W1 + b1)
        t1 = x @ W1
        # tangent of line 11: h = np.tanh(x @ W1 + b1)
        t2 = x @ W1_dot
        del W1_dot
        # line 11: h = np.tanh(x @ W1 + b1)
        t3 = t1 + b1
        del t1
        # tangent of line 11: h = np.tanh(x @ W1 + b1)
        t4 = broadcast_like(t2, t3)
        del t2
        t5 = broadcast_like(b1_dot, t3)
        del b1_dot
        t6 = t4 + t5
        del t4, t5
        # line 11: h = np.tanh(x @ W1 + b1)
        h = np.tanh(t3)
        del t3
        # tangent of line 11: h = np.tanh(x @ W1 + b1)
        t7 = h * h
        t8 = 1 - t7
        del t7
        h_dot = t6 * t8
        del t6, t8
        # line 12: y = h @ W2 + b2
        t9 = h @ W2
        del h
        # tangent of line 12: y = h @ W2 + b2
        t10 = h_dot @ W2
        del h_dot
        # line 12: y = h @ W2 + b2
        y = t9 + b2
        del t9
        # tangent of line 12: y = h @ W2 + b2
        y_dot = broadcast_like(t10, y)
        del t10
        # line 13: return np.mean((y - t) ** 2)
        t11 = y - t
        del y
        # tangent of line 13: return np.mean((y - t) ** 2)
        t12 = broadcast_like(y_dot, t11)
        del y_dot
        # line 13: return np.mean((y - t) ** 2)
        t13 = t11 ** 2
        # tangent of line 13: return np.mean((y - t) ** 2)
        t14 = t12 * 2
        del t12
        t15 = t14 * t11
        del t11, t14
        # line 13: return np.mean((y - t) ** 2)
        t16 = np.mean(t13)
        del t13
        # tangent of line 13: return np.mean((y - t) ** 2)
        t17 = np.mean(t15)
        del t15
        return t16, t17
    except Exception as error:
        raise at_user_line(error)
