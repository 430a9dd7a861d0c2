def rnn_grad(W, U, xs, h):
    try:
        h_stack = []
        # line 54: for t in range(xs.shape[0]):
        h_1 = h
        for t in range(5):
            h_stack.append(h_1)
            # line 55: h = np.tanh(W @ h + U @ xs[t])
            h_2 = W @ h_1
            t1 = xs[t]
            t2 = U @ t1
            del t1
            h_2 += t2
            del t2
            np.tanh(h_2, out=h_2)
            h_1 = h_2
        # grad of line 56: return np.sum(h)
        dh_1 = np.broadcast_to(1.0, (4,))
        # grad of line 55: h = np.tanh(W @ h + U @ xs[t])
        dU = np.zeros((4, 2))
        dW = np.zeros((4, 4))
        # grad of line 54: for t in range(xs.shape[0]):
        for t in reversed(range(5)):
            h_2 = h_stack.pop()
            # grad of line 55: h = np.tanh(W @ h + U @ xs[t])
            t3 = xs[t]
            t4 = h_1 * h_1
            t5 = 1 - t4
            del t4
            dh_2 = dh_1 * t5
            del t5
            dU_1 = np.outer(dh_2, t3)
            del t3
            dW_1 = np.outer(dh_2, h_2)
            dh_1 = dh_2 @ W
            del dh_2
            dU += dU_1
            del dU_1
            dW += dW_1
            del dW_1
            h_1 = h_2
        # the gradients, with the shapes and dtypes of the arguments
        if dh_1.__class__ is not float or h.__class__ is not float:
            dh_1 = as_gradient_of(dh_1, h)
        return dW, dU, dh_1
    except Exception as error:
        raise at_user_line(error)
