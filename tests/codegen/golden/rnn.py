def rnn_grad(W, U, xs, h):
    if (type(W) not in array_kinds or type(U) not in array_kinds or
            type(xs) not in array_kinds or type(h) not in array_kinds):
        return by_structure(W, U, xs, h)
    try:
        shape_stack = []
        shape_stack_1 = []
        h_stack = []
        # line 54: for t in range(xs.shape[0]):
        t1 = np.shape(xs)
        t2 = t1[0]
        h_1 = h
        for t in range(t2):
            h_stack.append(h_1)
            # line 55: h = np.tanh(W @ h + U @ xs[t])
            t3 = W @ h_1
            shape = shape_of(t3)
            shape_stack_1.append(shape)
            t4 = xs[t]
            t5 = U @ t4
            del t4
            shape = shape_of(t5)
            shape_stack.append(shape)
            t6 = t3 + t5
            del t3, t5
            h_1 = np.tanh(t6)
            del t6
        # grad of line 56: return np.sum(h)
        dh_1 = broadcast_like(1.0, h_1)
        # grad of line 55: h = np.tanh(W @ h + U @ xs[t])
        dU = zero_adjoint(U)
        dW = zero_adjoint(W)
        # grad of line 54: for t in range(xs.shape[0]):
        U_adjoints = []
        U_operands = []
        W_adjoints = []
        W_operands = []
        for t in reversed(range(t2)):
            h_2 = h_stack.pop()
            # grad of line 55: h = np.tanh(W @ h + U @ xs[t])
            t7 = xs[t]
            shape = shape_stack_1.pop()
            shape_1 = shape_stack.pop()
            t8 = h_1 * h_1
            t9 = 1 - t8
            del t8
            dt6 = dh_1 * t9
            del t9
            dt3 = unbroadcast_to(dt6, shape)
            del shape
            dt5 = unbroadcast_to(dt6, shape_1)
            del dt6, shape_1
            U_adjoints.append(dt5)
            del dt5
            U_operands.append(t7)
            del t7
            W_adjoints.append(dt3)
            W_operands.append(h_2)
            dh_1 = matmul_grad_rhs(dt3, W, h_2)
            del dt3
            h_1 = h_2
        del t2
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
