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
        U_adjoints = []
        U_operands = []
        W_adjoints = []
        W_operands = []
        for t in reversed(range(5)):
            h_2 = h_stack.pop()
            # grad of line 55: h = np.tanh(W @ h + U @ xs[t])
            t3 = xs[t]
            t4 = h_1 * h_1
            t5 = 1 - t4
            del t4
            dh_2 = dh_1 * t5
            del t5
            U_adjoints.append(dh_2)
            U_operands.append(t3)
            del t3
            W_adjoints.append(dh_2)
            W_operands.append(h_2)
            dh_1 = dh_2 @ W
            del dh_2
            h_1 = h_2
        dU_steps = matmul_grad_lhs_of_steps(U_adjoints, U, U_operands)
        del U_adjoints, U_operands
        # grad of line 54: for t in range(xs.shape[0]):
        dU += dU_steps
        del dU_steps
        # grad of line 55: h = np.tanh(W @ h + U @ xs[t])
        dW_steps = matmul_grad_lhs_of_steps(W_adjoints, W, W_operands)
        del W_adjoints, W_operands
        # grad of line 54: for t in range(xs.shape[0]):
        dW += dW_steps
        del dW_steps
        # the gradients, with the shapes and dtypes of the arguments
        if dW.__class__ is not float or W.__class__ is not float:
            dW = as_gradient_of(dW, W)
        if dU.__class__ is not float or U.__class__ is not float:
            dU = as_gradient_of(dU, U)
        if dh_1.__class__ is not float or h.__class__ is not float:
            dh_1 = as_gradient_of(dh_1, h)
        return dW, dU, dh_1
    except Exception as error:
        raise at_user_line(error)
