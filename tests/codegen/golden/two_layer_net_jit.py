def two_layer_net_grad(x, W1, b1, W2, b2, t):
    try:
        # line 11: h = np.tanh(x @ W1 + b1)
        h = x @ W1
        h += b1
        np.tanh(h, out=h)
        # line 12: y = h @ W2 + b2
        t1 = h @ W2
        t1 += b2
        # line 13: return np.mean((y - t) ** 2)
        t1 -= t
        # grad of line 13: return np.mean((y - t) ** 2)
        t1 *= 0.0625
        # grad of line 12: y = h @ W2 + b2
        db2 = np.sum(t1, axis=0)
        t2 = W2.T
        dh = t1 @ t2
        del t2
        t3 = h.T
        dW2 = t3 @ t1
        del t1, t3
        # grad of line 11: h = np.tanh(x @ W1 + b1)
        t4 = h * h
        del h
        t5 = 1 - t4
        del t4
        dh *= t5
        del t5
        db1 = np.sum(dh, axis=0)
        t6 = x.T
        dW1 = t6 @ dh
        del dh, t6
        return dW1, db1, dW2, db2
    except Exception as error:
        raise at_user_line(error)
