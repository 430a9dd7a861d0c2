def logged_loss_grad(W, x):
    if type(W) not in array_kinds or type(x) not in array_kinds:
        return by_structure(W, x)
    try:
        # line 88: h = np.tanh(x @ W)
        t1 = x @ W
        h = np.tanh(t1)
        # line 89: assert h.shape == (x.shape[0], W.shape[1]), "one row of h per row of x"
        t2 = np.shape(t1)
        t3 = np.shape(x)
        t4 = t3[0]
        t5 = np.shape(W)
        t6 = t5[1]
        t7 = t2 == (t4, t6)
        del t4, t6
        assert t7, 'one row of h per row of x'
        # line 90: loss = np.mean(h ** 2)
        t8 = h ** 2
        loss = np.mean(t8)
        del t8
        # line 91: print(f"loss {loss:.4f}, mean activation %.3f" % np.mean(h))
        t9 = f'loss {loss:.4f}, mean activation %.3f'
        t10 = np.mean(h)
        t11 = t9 % (t10,)
        print(t11)
        # grad of line 90: loss = np.mean(h ** 2)
        t12 = np.size(t1)
        del t1
        t13 = 1.0 / t12
        t14 = t13 * 2
        dh = t14 * h
        # grad of line 88: h = np.tanh(x @ W)
        t15 = h * h
        del h
        t16 = 1 - t15
        del t15
        dt1 = dh * t16
        del dh, t16
        dW = matmul_grad_rhs(dt1, x, W)
        del dt1
        # the gradients, with the shapes and dtypes of the arguments
        if dW.__class__ is not float or W.__class__ is not float:
            dW = as_gradient_of(dW, W)
        return dW
    except Exception as error:
        raise at_user_line(error)
